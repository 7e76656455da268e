import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PERSONAL_DATA_REGISTER } from '../../src/customers/personal-data.register';

const SECTION = '\n## Personal data: where it is stored and how it is erased\n';

/** The rows of the section's table: `table`, `column` and what the last cell says it is erased to. */
function documentedRows(): { table: string; column: string; erasedTo: string }[] {
  const page = readFileSync(resolve(__dirname, '../../docs/security.md'), 'utf8');
  const start = page.indexOf(SECTION);
  if (start === -1) throw new Error('docs/security.md has no section on personal data');
  const end = page.indexOf('\n## ', start + SECTION.length);
  return page
    .slice(start, end === -1 ? undefined : end)
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const cells = line.split(' | ');
      return { table: cells[0].slice(3, -1), column: cells[1].slice(1, -1), erasedTo: cells[4].replace(/ \|$/, '') };
    });
}

const ERASED_TO = {
  mark: '`[erased]`',
  'sealed-mark': '`[erased]`, sealed',
  cleared: 'NULL',
  'known-values': "the customer's values → `[erased]`",
};

describe('docs/security.md lists the personal-data register', () => {
  it('every column of the register, and no other, with how it is erased', () => {
    expect(documentedRows()).toEqual(
      PERSONAL_DATA_REGISTER.map((entry) => ({ table: entry.table, column: entry.column, erasedTo: ERASED_TO[entry.erasure] })),
    );
  });
});

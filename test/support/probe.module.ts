import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { Type } from 'class-transformer';
import { ArrayMinSize, IsEmail, IsInt, IsString, Min, ValidateNested } from 'class-validator';
import { Auth, CurrentUser } from '../../src/auth/auth.decorator';
import { AuthModule } from '../../src/auth/auth.module';
import type { AuthUser } from '../../src/auth/auth.types';
import { AgentBudgetExhaustedError } from '../../src/provider/provider.errors';

class ProbeItemDto {
  @IsString()
  name: string;

  @IsInt()
  @Min(1)
  quantity: number;
}

class ProbeBodyDto {
  @IsEmail()
  email: string;

  @ValidateNested({ each: true })
  @Type(() => ProbeItemDto)
  @ArrayMinSize(1)
  items: ProbeItemDto[];
}

/** Routes that exist only in tests, to exercise the app-wide pipe, filter and guard. */
@Controller('probe')
class ProbeController {
  @Post('validate')
  validate(@Body() body: ProbeBodyDto) {
    return body;
  }

  @Get('crash')
  crash(): never {
    throw new Error('database password is hunter2 at /srv/app.js:42');
  }

  @Get('budget')
  budget(): never {
    throw new AgentBudgetExhaustedError(321);
  }

  @Get('finance')
  @Auth('finance')
  finance(@CurrentUser() user: AuthUser) {
    return user;
  }
}

@Module({ imports: [AuthModule], controllers: [ProbeController] })
export class ProbeModule {}

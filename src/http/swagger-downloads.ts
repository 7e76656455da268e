/**
 * Swagger UI reads every text-like answer (`text/csv` included) with `Response.text()`, which drops
 * a leading byte-order mark, and builds its "Download file" link from that text: the CSV export
 * lost the BOM that makes Excel read it as UTF-8 (`Zoé` became `ZoÃ©`), although curl got it.
 * This request interceptor gives Swagger UI a fetch whose answers that are downloads
 * (`Content-Disposition: attachment`) decode their text with the BOM kept, so the link holds the
 * bytes the service sent. Sent to the page as its source (SwaggerModule writes it into
 * swagger-ui-init.js), hence JavaScript text that no compiler rewrites.
 */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- the page's code, never run here
export const keepDownloadBytes = new Function(
  'request',
  `
  request.userFetch = function (url, init) {
    return fetch(url, init).then(function (response) {
      if (/attachment/i.test(response.headers.get('content-disposition') || '')) {
        response.text = function () {
          return response.arrayBuffer().then(function (bytes) {
            return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
          });
        };
      }
      return response;
    });
  };
  return request;
`,
);

import { describe, expect, it } from 'vitest';
import { HtmlAnswerError, isHtmlContentType, refuseHtmlAnswers } from './html-answers.js';

const BASE_URL = 'http://127.0.0.1:8080';

/** A fetch that answers `body` as `contentType` with `status`, whatever it is asked. */
function answering(status: number, contentType: string, body: string): typeof globalThis.fetch {
  return () => Promise.resolve(new Response(body, { status, headers: { 'content-type': contentType } }));
}

describe('refuseHtmlAnswers', () => {
  it('passes answers that are not web pages through untouched', async () => {
    const response = await refuseHtmlAnswers(answering(200, 'application/json', '{"ok":true}'), BASE_URL)('http://127.0.0.1:8080/chat/completions');
    expect(await response.json()).toEqual({ ok: true });
  });

  it('rejects a page with its status and title, and a page without a title with its status alone', async () => {
    const titled = refuseHtmlAnswers(answering(404, 'TEXT/HTML; charset=utf-8', '<html><head><title>Not\n Found</title></head></html>'), BASE_URL);
    await expect(titled('http://127.0.0.1:8080/chat/completions')).rejects.toMatchObject({ name: 'HtmlAnswerError', status: 404, title: 'Not Found' });
    const untitled = refuseHtmlAnswers(answering(200, 'application/xhtml+xml', '<html><body>hello</body></html>'), BASE_URL);
    const refusal: unknown = await untitled('http://127.0.0.1:8080/chat/completions').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(HtmlAnswerError);
    expect((refusal as HtmlAnswerError).message).toContain(`The server at ${BASE_URL} answered with an HTML page (HTTP 200), not a model's answer`);
  });

  it('cuts a long title short', async () => {
    const page = `<title>${'x'.repeat(200)}</title>`;
    const refusal: unknown = await refuseHtmlAnswers(answering(200, 'text/html', page), BASE_URL)('http://127.0.0.1:8080/x').catch((error: unknown) => error);
    expect((refusal as HtmlAnswerError).title).toBe(`${'x'.repeat(79)}…`);
  });
});

describe('isHtmlContentType', () => {
  it.each([
    ['text/html', true],
    ['text/html; charset=utf-8', true],
    ['application/xhtml+xml', true],
    ['application/json', false],
    ['text/event-stream', false],
    ['', false],
    [null, false],
  ])('%s: %s', (contentType, expected) => {
    expect(isHtmlContentType(contentType)).toBe(expected);
  });
});

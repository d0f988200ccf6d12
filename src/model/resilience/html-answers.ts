/**
 * A web page where the model API's answer should be: what a proxy, a login page or a web
 * server answers when the base URL is not the API's address (one without its /v1, say).
 */
export class HtmlAnswerError extends Error {
  override readonly name = 'HtmlAnswerError';

  constructor(
    readonly baseUrl: string,
    readonly status: number,
    readonly title: string | null,
  ) {
    const page = title === null ? `HTTP ${status}` : `HTTP ${status}, "${title}"`;
    super(
      `The server at ${baseUrl} answered with an HTML page (${page}), not a model's answer: ` +
        'is --base-url the API\'s address (often ending in /v1)? A proxy or a login page between colony and the API answers like this too.',
    );
  }
}

/**
 * Whether `contentType` is a web page's. A JSON error body, an event stream or no content type
 * at all is left to the provider's adapter.
 */
export function isHtmlContentType(contentType: string | null | undefined): boolean {
  if (contentType === null || contentType === undefined) return false;
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'text/html' || mediaType === 'application/xhtml+xml';
}

/**
 * `fetch` (the global one when undefined, looked up at each call) that rejects with an
 * HtmlAnswerError when the answer is a web page. The adapters would read a 200 page as an
 * empty answer or a broken stream, and a 401 or 404 page as the API's own refusal. A page
 * whose status says what is wrong on its own is let through, to be classified as any other
 * answer with that status: one worth retrying (408, 429, 5xx: a gateway's error page in front
 * of a real API), or a request grown too large for a proxy in front of it (413).
 */
export function refuseHtmlAnswers(fetch: typeof globalThis.fetch | undefined, baseUrl: string): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await (fetch ?? globalThis.fetch)(input, init);
    if (!isHtmlContentType(response.headers.get('content-type')) || speaksForItself(response.status)) return response;
    throw new HtmlAnswerError(baseUrl, response.status, await pageTitle(response));
  };
}

function speaksForItself(status: number): boolean {
  return status === 408 || status === 413 || status === 429 || status >= 500;
}

/** How much of a page is read to find its title. */
const TITLE_SEARCH_CHARS = 16_384;
const TITLE_CHARS = 80;

/** The page's `<title>`, from its first bytes, or null; the rest of the body is dropped. */
async function pageTitle(response: Response): Promise<string | null> {
  const reader = response.body?.getReader();
  if (reader === undefined) return null;
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < TITLE_SEARCH_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (/<\/title>/i.test(text)) break;
    }
  } catch {
    // A page that breaks off is still a page; its title may be missing, that is all.
  } finally {
    reader.cancel().catch(() => undefined);
  }
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.replace(/\s+/g, ' ').trim() ?? '';
  if (title === '') return null;
  return title.length > TITLE_CHARS ? `${title.slice(0, TITLE_CHARS - 1)}…` : title;
}

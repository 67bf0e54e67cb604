// The controller's JSON API (docs/api.md), read with fetch from the same origin that served
// the page. Failures are thrown, never logged: the caller shows them in the status line.

/** An answer that is not 2xx; unreachable: the controller did not answer at all. */
export class ApiError extends Error {
    constructor(message, status, unreachable) {
        super(message);
        this.name = 'ApiError';
        this.status = status;
        this.unreachable = unreachable;
    }
}

/**
 * GETs path (e.g. "/v1/nodes") and returns the parsed JSON. Throws ApiError: unreachable for a
 * network error or no answer within timeoutMs, with the HTTP status and the API's "error"
 * message otherwise.
 */
export async function getJSON(path, timeoutMs = 5000) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    let res, body = null;
    try {
        res = await fetch(path, {
            signal: abort.signal,
            cache: 'no-store',
            headers: {Accept: 'application/json'},
        });
        body = await res.json().catch(() => null);
    } catch (e) {
        const why = e && e.name === 'AbortError' ? `no answer in ${timeoutMs / 1000} s`
                                                 : 'connection failed';
        throw new ApiError(why, 0, true);
    } finally {
        clearTimeout(timer);
    }
    if (!res.ok) {
        const msg = body && typeof body.error === 'string' ? body.error : res.statusText;
        throw new ApiError(`${path}: ${res.status} ${msg}`, res.status, res.status >= 502);
    }
    if (body === null)
        throw new ApiError(`${path}: the answer is not JSON`, res.status, false);
    return body;
}

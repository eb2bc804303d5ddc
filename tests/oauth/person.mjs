// A person at the authorization server's pages, with no browser: follows
// redirects by hand (keeping cookies), signs in at oidc-provider's dev login
// page as `login` (any name; it becomes `sub`) and consents, until the
// server sends the browser to the client's redirect URI.

/** Plays the user from `authorizationUrl` until a redirect to a URL starting
 * with `redirectPrefix`; returns that URL (it carries `code` and `state`). */
export async function playUser(authorizationUrl, login, redirectPrefix) {
  const cookies = new Map();
  const remember = (response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
    }
  };
  const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');

  async function browse(url, init = {}) {
    let next = new URL(url);
    let request = init;
    for (let hops = 0; hops < 20; hops += 1) {
      if (next.href.startsWith(redirectPrefix)) return { redirectedTo: next };
      const response = await fetch(next, { ...request, redirect: 'manual', headers: { ...request.headers, cookie: cookieHeader() } })
        .catch((e) => { throw new Error(`${next.href}: ${e.cause ?? e}`); });
      remember(response);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        next = new URL(location, next);
        request = {};
        continue;
      }
      if (!response.ok) throw new Error(`${next.href}: HTTP ${response.status}: ${await response.text()}`);
      return { page: await response.text(), at: next };
    }
    throw new Error('too many redirects');
  }

  let step = await browse(authorizationUrl);
  while (!step.redirectedTo) {
    const action = /<form[^>]*action="([^"]+)"/.exec(step.page)?.[1];
    if (!action) throw new Error(`no form at ${step.at.href}`);
    const form = step.page.includes('name="login"')
      ? { prompt: 'login', login, password: 'any' }
      : { prompt: 'consent' };
    step = await browse(new URL(action, step.at), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
  }
  const { redirectedTo } = step;
  const error = redirectedTo.searchParams.get('error');
  if (error) throw new Error(`authorization refused: ${error}: ${redirectedTo.searchParams.get('error_description')}`);
  return redirectedTo;
}

// Fixture structuredContent in the shapes the Index tools return: discover_filter's
// cards (see src/index/cards.rs), discover_connections' and extract_intent's.
const PEOPLE = [
  ['Ada Lovelace', 'AL', 'Mathematician; writes about engines'],
  ['Grace Hopper', 'GH', 'Compilers and naval history'],
  ['Alan Turing', 'AT', null],
  ['Katherine Johnson', 'KJ', 'Orbital mechanics'],
];
const INTENT_IDS = ['i-1', 'i-2'];

/** How the gateway shows the call to the widget: tool_execute's arguments. */
export const GATEWAY_INPUT = { toolKey: 'index:discover_filter', arguments: { intentIds: INTENT_IDS, limit: 3, page: 1 } };

/** The i-th card; `failed` gives it a missing VibeCheck. */
export function card(i, { failed = false } = {}) {
  const [title, initials, subtitle] = PEOPLE[i % PEOPLE.length];
  const badges = ['2 intents', ...(failed ? ['VibeCheck unavailable'] : [])];
  return {
    header: { title, ...(subtitle ? { subtitle } : {}), badge: badges[0], badges, initials, userId: `u-${i}` },
    body: {
      context: '1. Analytical engines\n2. Poetry of science',
      stats: [
        { label: 'Shared intents', value: 2 },
        { label: 'Total stake', value: 12.5 - i },
      ],
      vibecheck: failed ? 'VibeCheck summary unavailable.' : `You could [build engines](https://index.network/intents/i-${i + 1}) together.`,
      vibecheckAvailable: !failed,
    },
    actions: [
      { label: 'Connect', hint: 'Start a connection workflow', action: 'connect', payload: { userId: `u-${i}` } },
      { label: 'Save', hint: 'Save this match for later review', action: 'save', payload: { userId: `u-${i}` } },
    ],
  };
}

/** `n` cards on `page`. */
export function props(n, { page, hasNext, hasPrev }) {
  const cards = Array.from({ length: n }, (_, i) => card(i));
  const args = (p) => ({ intentIds: INTENT_IDS, limit: 3, page: p });
  return {
    results: cards.map((c) => ({ user: { id: c.header.userId, name: c.header.title, email: null, avatar: null, intro: null }, totalStake: 10, intents: [] })),
    pagination: { page, limit: 3, hasNext, hasPrev },
    filters: { intentIds: INTENT_IDS, userIds: null, indexIds: null, sources: null, excludeDiscovered: true },
    vibechecks: cards.map((c) => ({ targetUserId: c.header.userId, synthesis: c.body.vibecheck, status: 'ok' })),
    generatedIntents: null,
    cards,
    cardsMarkup: cards.map((c) => `### ${c.header.title}`),
    summary: `Used 2 existing intents · Found ${n} matches · page ${page}`,
    pageHint: {
      hasNext,
      hasPrev,
      nextPage: hasNext ? page + 1 : null,
      prevPage: hasPrev ? page - 1 : null,
      nextArguments: hasNext ? args(page + 1) : null,
      prevArguments: hasPrev ? args(page - 1) : null,
    },
  };
}

/** `discover_connections`' structuredContent with `n` people (see src/index.rs). */
export function connections(n) {
  const people = Array.from({ length: n }, (_, i) => {
    const [name, , intro] = PEOPLE[i % PEOPLE.length];
    return {
      id: `u-${i}`,
      user: { id: `u-${i}`, name, avatar: null, intro },
      synthesis: i === 2 ? '' : `You could [build engines](https://index.network/intents/i-${i + 1}) together.`,
      matchedIntents: [
        { id: 'i-1', payload: 'Analytical engines, at length', summary: 'Analytical engines' },
        { id: 'i-2', payload: 'Poetry of science', summary: null },
      ].slice(0, 1 + (i % 2)),
      totalStake: 10 - i,
      // As the gateway sends them (crates/index-network/src/cards.rs).
      actions: [
        { label: 'Connect', hint: 'Start a connection workflow', action: 'connect', payload: { userId: `u-${i}` } },
        { label: 'Save', hint: 'Save this match for later review', action: 'save', payload: { userId: `u-${i}` } },
      ],
    };
  });
  return { connections: people, intentsExtracted: 2, connectionsFound: n, summary: `Found ${n} connections` };
}

/** `extract_intent`'s structuredContent with `n` intents (see src/index/protocol.rs). */
export function intents(n) {
  const texts = ['Looking for a co-founder in Berlin', 'Offering mentorship in distributed systems', 'Learning Rust'];
  return {
    intents: Array.from({ length: n }, (_, i) => ({
      id: `i-${i + 1}`,
      payload: `${texts[i % texts.length]}, in the user's words`,
      ...(i % 2 === 0 ? { summary: texts[i % texts.length] } : {}),
      createdAt: `2026-11-2${i}T10:00:00.000Z`,
    })),
    filesProcessed: 0,
    linksProcessed: n > 1 ? 1 : 0,
    intentsGenerated: n,
  };
}

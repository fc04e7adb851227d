// The Met explorer: the reference front end of TheMet server. It uses only the server's public
// routes (/search, /objects/{id}, /departments, /random, /widget/timeline, /open, /iiif), so what
// it does, any front end can do. No framework, no build step: this file is served as it is.
//
// Views, by the location's hash:
//   #/                  search (no search yet)
//   #/search?q=…        a search with its filters and sort (shareable, and the back button works)
//   #/objects/{id}      an object's detail view (public domain) or its link out (the rest)
//   #/open?url=themet://{id}   a deep link, resolved through /open
//   #/widget            the widget preview

const PAGE_SIZE = 24;
/** How long the server may wait for uncached objects before answering with `pending` (ms). */
const WAIT_MS = 1500;
/** The pause between two asks for a page's pending objects (ms), doubled while nothing arrives. */
const POLL_MS = 500;
const MAX_POLL_MS = 8000;
/** Asks in a row without a pending object arriving (and no block to wait out) before a page
 * stops waiting for the rest: about 15 s. What did not arrive can be opened, which asks again. */
const GIVE_UP_AFTER = 5;
/** The parameters of /search the explorer passes on from its hash. */
const SEARCH_PARAMETERS = ['q', 'hasImages', 'isHighlight', 'isOnView', 'departmentId', 'dateBegin', 'dateEnd', 'sort'];
/** The facets a search of this server's copy counts, in the order shown. */
const FACETS = ['department', 'century', 'classification', 'isPublicDomain'];
const FACET_NAMES = { department: 'Department', century: 'Century', classification: 'Classification', isPublicDomain: 'Public domain' };
/** A picture of the Met's image host in a shape this server serves at /images/ (the rest of the
 * URL is the path it keeps); pictures come only from this server (so says the
 * Content-Security-Policy). */
const IMAGE_HOST_PICTURE = /^https:\/\/images\.metmuseum\.org(\/CRDImages\/[a-z]{2,8}\/(?:original|web-large)\/[A-Za-z0-9_-][A-Za-z0-9._-]{0,199})$/;
const FORMAT = new Intl.NumberFormat('en');

const $ = (id) => document.getElementById(id);

/** The state of the search on screen. */
const search = {
  /** The AbortController of the search in progress, or null. */
  controller: null,
  /** The hash's parameters of the search shown (string), to tell a new search from the same one. */
  key: null,
  /** The `next` link of the last page, or null. */
  next: null,
  total: 0,
  /** Objects asked for and arrived (all pages so far), for the loading line. */
  asked: 0,
  arrived: 0,
  missing: 0,
  withoutImage: 0,
  hiddenNotPublicDomain: 0,
  /** Whether only public-domain objects are shown (a filter of the explorer's: the Met has none). */
  publicDomainOnly: false,
  /** Cards on screen by object ID (placeholders included). */
  cards: new Map(),
  /** IDs left out because they are not in the public domain. */
  hidden: new Set(),
  /** A search is under way: a page being fetched, its pending objects asked for again, or a
   * firewall block counted down before it goes on. */
  busy: false,
  /** The query, for the status lines. */
  words: '',
  /** Whether this server's copy was asked for (`source=local`). */
  local: false,
  /** Where the last page came from (`met` or `local`, which also answers when the Met cannot),
   * and how many records the server's copy holds. */
  source: 'met',
  indexed: 0,
};

/** A failed request: a problem document (RFC 9457) or a network failure. */
class RequestFailure extends Error {
  constructor(status, problem, retryAfter) {
    super(problem ? problem.title : 'request failed');
    this.status = status;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }
}

/** GET `url` as JSON; throws RequestFailure for any answer but a 2xx, AbortError when aborted. */
async function getJSON(url, signal) {
  let response;
  try {
    response = await fetch(url, { signal, headers: { Accept: 'application/json' } });
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new RequestFailure(0, {
      title: 'The server cannot be reached',
      detail: 'The request did not get an answer: is the server still running?',
    });
  }
  if (response.ok) return response.json();
  let problem = null;
  try {
    problem = await response.json();
  } catch {
    problem = { title: `HTTP ${response.status}`, detail: 'The server answered without a problem document.' };
  }
  const retryAfter = Number.parseInt(response.headers.get('Retry-After') || '', 10);
  throw new RequestFailure(response.status, problem, Number.isFinite(retryAfter) ? retryAfter : null);
}

const aborted = () => new DOMException('aborted', 'AbortError');

/** Waits `ms`; rejects with an AbortError as soon as `signal` aborts (or at once if it has). */
const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(aborted());
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** The most characters of one text the page shows. A record's field may hold 100,000 characters
 * without a space: laid out, that stalls the browser for seconds, and no one reads it. */
const MAX_SHOWN = 1000;

/** `text`, cut to MAX_SHOWN characters with an ellipsis (never inside a surrogate pair). */
function clip(text) {
  const whole = String(text);
  if (whole.length <= MAX_SHOWN) return whole;
  const end = /[\uD800-\uDBFF]/.test(whole[MAX_SHOWN - 1]) ? MAX_SHOWN - 1 : MAX_SHOWN;
  return `${whole.slice(0, end)}…`;
}

/** An element with a class and text (clipped). */
function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = clip(text);
  return node;
}

/** This server's URL of `url`, a picture on the Met's image host (`/images/CRDImages/…`), else null. */
function imageURL(url) {
  const match = typeof url === 'string' ? IMAGE_HOST_PICTURE.exec(url) : null;
  return match && /\.(jpe?g|png|tiff?|webp)$/i.test(match[1]) ? `/images${match[1]}` : null;
}

/** `url` when it is a picture this server serves (`/images/…`, as the widget timeline gives
 * them: relative, or absolute on this origin), as a path; else null. */
function servedImageURL(url) {
  if (typeof url !== 'string') return null;
  const path = url.startsWith(location.origin + '/') ? url.slice(location.origin.length) : url;
  return path.startsWith('/images/CRDImages/') ? path : null;
}

/** `anchor`, made to open in a new tab without giving that tab a handle on this page. */
function inNewTab(anchor) {
  anchor.target = '_blank';
  anchor.rel = 'noopener';
  return anchor;
}

/** A link to `href` saying `text`. */
function link(href, text) {
  const anchor = element('a', null, text);
  anchor.href = href;
  return anchor;
}

/** Who made `record` and when, as a card or a link out shows it ("Vincent van Gogh, 1889"). */
function byline(record) {
  return [record.artistDisplayName, record.objectDate].filter(Boolean).join(', ');
}

/** What an image of `record` says to someone who cannot see it. */
function altText(record) {
  const title = record.title || `Object ${record.objectID}`;
  return clip(record.artistDisplayName ? `${title}, by ${record.artistDisplayName}` : title);
}

// MARK: Status

/**
 * Shows the search's state: idle, loading, empty, results, stopped, error or blocked, with a
 * title and a detail line.
 */
function setStatus(state, title, detail = '') {
  const status = $('status');
  status.dataset.state = state;
  $('status-title').textContent = title;
  $('status-detail').textContent = detail;
}

function setBusy(busy) {
  search.busy = busy;
  $('stop').disabled = !busy;
  $('search-form').setAttribute('aria-busy', String(busy));
}

function quoted(words) {
  return `“${words}”`;
}

/** The loading line: how many of the objects asked for have arrived. */
function showProgress() {
  setStatus('loading', `Searching for ${searched()}…`, search.asked
    ? `${search.arrived} of ${search.asked} objects arrived.`
    : 'Waiting for the list of matching objects.');
}

function showLosses() {
  const parts = [];
  if (search.missing) parts.push(`${search.missing} ID${search.missing === 1 ? '' : 's'} the Met lists but answers 404 for`);
  if (search.withoutImage) parts.push(`${search.withoutImage} without an image`);
  if (search.hiddenNotPublicDomain) parts.push(`${search.hiddenNotPublicDomain} not in the public domain (hidden)`);
  const losses = $('losses');
  losses.hidden = parts.length === 0;
  losses.textContent = parts.length ? `Left out: ${parts.join('; ')}.` : '';
}

function showResults() {
  const shown = [...search.cards.values()].filter((card) => !card.classList.contains('pending')).length;
  const pending = search.cards.size - shown;
  const more = search.next ? 'Scroll down for more.' : 'That is all.';
  const detail = pending ? `${pending} did not arrive in time: open one to try again. ${more}` : more;
  setStatus('results', `${FORMAT.format(search.total)} result${search.total === 1 ? '' : 's'} for ${searched()}; ${shown} shown.`,
    `${copyNote()}${detail}`);
}

/** What was searched for, for the status lines: the words, or the filters alone. */
function searched() {
  return search.words ? quoted(search.words) : 'the filters';
}

/** Where the results come from, when it is this server's copy: asked for, or standing in for the Met. */
function copyNote() {
  if (search.source !== 'local') return '';
  const copy = `this server’s copy (${FORMAT.format(search.indexed)} record${search.indexed === 1 ? '' : 's'})`;
  return search.local ? `Searching ${copy}. ` : `The Met could not answer: these come from ${copy}. `;
}

/**
 * Whether `failure` asks to wait and try again, with Retry-After: the Met's firewall refusing this
 * server (a 503 `upstream_blocked`), or this browser's share of the Met in use (a 429
 * `too_many_requests`: it asked for more objects than may wait at once).
 */
function mustWait(failure) {
  const code = failure.problem?.code;
  return (failure.status === 503 && code === 'upstream_blocked') || (failure.status === 429 && code === 'too_many_requests');
}

/** What a wait for `failure` says while it counts down. */
function waitHeadline(failure) {
  return failure.status === 429
    ? 'This browser already has its share of requests waiting for the Met.'
    : 'The Met’s firewall is refusing this server’s requests for a while.';
}

/** A failed request's problem, shown: its title and detail. */
function showFailure(failure) {
  const problem = failure.problem || {};
  if (mustWait(failure)) {
    setStatus('blocked', problem.title || 'The Met is refusing requests for a while.',
      `${problem.detail || ''} Try again in ${failure.retryAfter ?? 60} s.`);
    return;
  }
  setStatus('error', problem.title || 'Something went wrong', problem.detail || '');
}

/**
 * A wait (a firewall block, or this browser's share of the Met in use), shown as a countdown of
 * `seconds`, second by second, under `headline`. Resolves at 0; rejects with an AbortError when
 * `signal` aborts (Stop, or another search).
 */
function countDown(seconds, signal, headline = waitHeadline({ status: 503 })) {
  const status = $('status');
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(aborted());
    let left = Math.max(1, Math.ceil(seconds));
    const show = () => {
      setStatus('blocked', headline, `Trying again in ${left} s.`);
      status.dataset.retryIn = String(left);
    };
    const onAbort = () => {
      done();
      reject(aborted());
    };
    const done = () => {
      clearInterval(timer);
      signal.removeEventListener('abort', onAbort);
      delete status.dataset.retryIn;
    };
    show();
    const timer = setInterval(() => {
      left -= 1;
      if (left > 0) return show();
      done();
      resolve();
    }, 1000);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** How long the server says the Met's firewall blocks it (s, from /health), or 0. */
async function blockedSeconds(signal) {
  try {
    const { upstream } = await getJSON('/health', signal);
    if (upstream.state !== 'blocked' || !upstream.blockedUntil) return 0;
    return Math.max(0, (Date.parse(upstream.blockedUntil) - Date.now()) / 1000);
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    return 0;
  }
}

// MARK: Search

/** The search the form describes, as the hash's parameters (the explorer's own names). */
function formParameters() {
  const form = $('search-form');
  const parameters = new URLSearchParams();
  parameters.set('q', form.q.value.trim());
  if (!form.hasImages.checked) parameters.set('hasImages', 'false');
  if (form.local.checked) parameters.set('source', 'local');
  if (form.isPublicDomain.checked) parameters.set('isPublicDomain', 'true');
  if (form.isHighlight.checked) parameters.set('isHighlight', 'true');
  if (form.isOnView.checked) parameters.set('isOnView', 'true');
  if (form.departmentId.value) parameters.set('departmentId', form.departmentId.value);
  if (form.dateBegin.value !== '' && form.dateEnd.value !== '') {
    parameters.set('dateBegin', form.dateBegin.value);
    parameters.set('dateEnd', form.dateEnd.value);
  }
  const sort = form.sort.value;
  if (sort !== 'relevance') parameters.set('sort', form.order.value === 'desc' ? `-${sort}` : sort);
  return parameters;
}

/** Puts the hash's parameters back into the form (a shared link, the back button). */
function fillForm(parameters) {
  const form = $('search-form');
  form.q.value = parameters.get('q') || '';
  form.hasImages.checked = parameters.get('hasImages') !== 'false';
  form.local.checked = parameters.get('source') === 'local';
  form.isPublicDomain.checked = parameters.get('isPublicDomain') === 'true';
  form.isHighlight.checked = parameters.get('isHighlight') === 'true';
  form.isOnView.checked = parameters.get('isOnView') === 'true';
  // Kept aside too: the department list may not have arrived yet (loadDepartments applies it).
  form.departmentId.dataset.wanted = parameters.get('departmentId') || '';
  form.departmentId.value = form.departmentId.dataset.wanted;
  form.dateBegin.value = parameters.get('dateBegin') || '';
  form.dateEnd.value = parameters.get('dateEnd') || '';
  const sort = parameters.get('sort') || 'relevance';
  form.sort.value = sort.replace(/^-/, '');
  form.order.value = sort.startsWith('-') ? 'desc' : 'asc';
  syncOrder();
}

/** Relevance has one order only: the Met's. */
function syncOrder() {
  const form = $('search-form');
  form.order.disabled = form.sort.value === 'relevance';
}

/** Whether the years are both given or both left out; says so on the field if not. */
function checkYears() {
  const form = $('search-form');
  const one = (form.dateBegin.value === '') !== (form.dateEnd.value === '');
  form.dateEnd.setCustomValidity(one ? 'Give both years, or neither.' : '');
  form.dateBegin.setCustomValidity('');
  const begin = Number(form.dateBegin.value);
  const end = Number(form.dateEnd.value);
  if (!one && form.dateBegin.value !== '' && end < begin) {
    form.dateEnd.setCustomValidity('The last year cannot come before the first.');
  }
  return form.reportValidity();
}

/** The /search URL of the first page of the hash's search: its search parameters only (the
 * public-domain filter is the explorer's own: the Met's search has none). This server's copy
 * (`source=local`) filters by public domain itself, and counts the facets. */
function searchURL(parameters) {
  const api = new URLSearchParams();
  for (const name of SEARCH_PARAMETERS) {
    if (parameters.has(name)) api.set(name, parameters.get(name));
  }
  if (parameters.get('source') === 'local') {
    api.set('source', 'local');
    if (parameters.get('isPublicDomain') === 'true') api.set('isPublicDomain', 'true');
    api.set('facets', FACETS.join(','));
  }
  api.set('limit', String(PAGE_SIZE));
  api.set('wait', String(WAIT_MS));
  return `/search?${api}`;
}

/**
 * The counts by facet of a search of this server's copy (null hides them). A value the form can
 * filter by is a button that narrows the search to it: a department (by its ID), a century (as
 * years), the public domain.
 */
function showFacets(facets) {
  const panel = $('facets');
  panel.replaceChildren();
  panel.hidden = !facets;
  if (!facets) return;
  for (const name of FACETS) {
    const facet = facets[name];
    if (!facet || facet.values.length === 0) continue;
    const section = element('section');
    const heading = element('h3', null, FACET_NAMES[name]);
    heading.id = `facet-${name}`;
    const list = element('ul');
    list.setAttribute('aria-labelledby', heading.id);
    for (const bucket of facet.values.slice(0, 12)) {
      const label = facetLabel(name, bucket);
      const narrow = facetFilter(name, bucket);
      const item = element('li');
      const value = narrow ? element('button') : element('span', 'facet-value');
      if (narrow) {
        value.type = 'button';
        value.title = `Only ${label}`;
        value.addEventListener('click', () => {
          const parameters = formParameters();
          for (const [key, text] of Object.entries(narrow)) parameters.set(key, text);
          location.hash = `#/search?${parameters}`;
        });
      }
      value.dataset.facet = name;
      value.append(clip(label), element('span', 'count', FORMAT.format(bucket.count)));
      item.append(value);
      list.append(item);
    }
    section.append(heading, list);
    panel.append(section);
  }
}

/** A facet value as shown. */
function facetLabel(name, bucket) {
  if (bucket.value === null) return 'None given';
  if (name === 'century') return bucket.label;
  if (name === 'isPublicDomain') return bucket.value ? 'Public domain' : 'Not public domain';
  return String(bucket.value);
}

/** The hash parameters that narrow a search to a facet value, or null when the form cannot. */
function facetFilter(name, bucket) {
  if (name === 'department' && bucket.departmentId) return { departmentId: String(bucket.departmentId) };
  // A century counts the works begun in it; the filter keeps those begun and ended within it
  // (the Met's dates filter), so it may keep fewer. The server counts year 0 in the first.
  if (name === 'century' && bucket.value !== null) {
    const first = bucket.value > 0 ? (bucket.value - 1) * 100 + 1 : bucket.value * 100;
    return { dateBegin: String(bucket.value === 1 ? 0 : first), dateEnd: String(first + 99) };
  }
  if (name === 'isPublicDomain' && bucket.value === true) return { isPublicDomain: 'true' };
  return null;
}

/** Starts the search the hash names, unless it is the one on screen. */
function showSearch(parameters) {
  showView('search');
  const key = parameters.toString();
  if (key === search.key) return;
  fillForm(parameters);
  if (!(parameters.get('q') || '').trim() && parameters.get('source') !== 'local') {
    resetSearch();
    return;
  }
  startSearch(parameters);
}

/** Clears the results and the counters. */
function resetSearch() {
  stopSearch({ silently: true });
  search.key = null;
  $('status').dataset.query = '';
  search.next = null;
  search.total = 0;
  search.asked = 0;
  search.arrived = 0;
  search.missing = 0;
  search.withoutImage = 0;
  search.hiddenNotPublicDomain = 0;
  search.source = 'met';
  search.indexed = 0;
  delete $('status').dataset.source;
  showFacets(null);
  search.cards.clear();
  search.hidden.clear();
  $('results').replaceChildren();
  $('more').hidden = true;
  showLosses();
  setStatus('idle', 'No search yet.', 'Type a few words above: the results come from the Met through this server’s cache.');
}

function startSearch(parameters) {
  resetSearch();
  search.key = parameters.toString();
  $('status').dataset.query = search.key;
  search.words = (parameters.get('q') || '').trim();
  search.local = parameters.get('source') === 'local';
  // This server's copy filters by public domain itself; the Met's search cannot, so the explorer does.
  search.publicDomainOnly = !search.local && parameters.get('isPublicDomain') === 'true';
  const controller = new AbortController();
  search.controller = controller;
  loadPage(searchURL(parameters), controller);
}

/**
 * Fetches one page and shows it: its objects as cards, its pending objects as placeholders
 * that fill in as the page is asked for again, until nothing is pending or the search stops.
 * A firewall block is counted down, then the page asked for again; so is one the server reports
 * (/health) while pending objects stop arriving. Objects that still have not arrived after
 * `GIVE_UP_AFTER` asks are left as placeholders, and the search goes on to the next page.
 * Resolves to whether the page was shown (false when it failed or the search stopped).
 */
async function loadPage(url, controller) {
  setBusy(true);
  showProgress();
  const own = new Set(); // The IDs whose cards this page made.
  let counted = null; // What this page added to the counters the last time it was asked for.
  let stalled = 0; // Asks in a row in which no pending object arrived.
  try {
    for (;;) {
      let page;
      try {
        page = await getJSON(url, controller.signal);
      } catch (error) {
        if (!mustWait(error)) throw error;
        await countDown(error.retryAfter ?? 60, controller.signal, waitHeadline(error));
        showProgress();
        continue;
      }
      if (controller !== search.controller) return false;
      search.source = page.source || 'met';
      search.indexed = page.indexed || 0;
      if (search.source === 'local') $('status').dataset.source = 'local';
      if (page.facets) showFacets(page.facets);
      const before = search.arrived;
      counted = count(page, counted);
      showPage(page, own);
      search.total = page.total;
      if (page.total === 0) {
        setStatus('empty', `Nothing found for ${searched()}.`, `${copyNote()}Try other words, or fewer filters.`);
        finish(null);
        return true;
      }
      if (page.pending.length === 0) {
        finish(page.next);
        return true;
      }
      stalled = search.arrived > before ? 0 : stalled + 1;
      if (stalled >= 2) {
        const blocked = await blockedSeconds(controller.signal);
        if (blocked > 0) {
          await countDown(blocked, controller.signal);
          stalled = 0;
        } else if (stalled >= GIVE_UP_AFTER) {
          for (const id of page.pending) search.cards.get(id)?.classList.add('unavailable');
          finish(page.next);
          return true;
        }
      }
      showProgress();
      await sleep(Math.min(POLL_MS * 2 ** stalled, MAX_POLL_MS), controller.signal);
    }
  } catch (error) {
    if (controller !== search.controller || error.name === 'AbortError') return false;
    setBusy(false);
    showFailure(error);
    return false;
  }
}

/** Adds a page's figures to the search's, replacing what an earlier answer for it added. */
function count(page, before) {
  const now = {
    asked: page.objects.length + page.missing.length + page.withoutImage.length + page.pending.length,
    arrived: page.objects.length + page.missing.length + page.withoutImage.length,
    missing: page.missing.length,
    withoutImage: page.withoutImage.length,
  };
  for (const name of Object.keys(now)) search[name] += now[name] - (before ? before[name] : 0);
  showLosses();
  return now;
}

/** The page is done: the results line, and the next page when there is one. */
function finish(next) {
  setBusy(false);
  search.next = next || null;
  $('more').hidden = !search.next;
  if (search.total > 0) showResults();
  if (search.next) observeEnd();
}

/**
 * Shows a page's objects, filling placeholders, and its pending IDs as placeholders, then puts
 * the cards this page made (`own`) in the page's order: the server's (its sort within the page),
 * then what is still pending.
 */
function showPage(page, own) {
  const results = $('results');
  for (const record of page.objects) {
    const id = record.objectID;
    const existing = search.cards.get(id);
    if (search.publicDomainOnly && !record.isPublicDomain) {
      if (search.hidden.has(id)) continue;
      search.hidden.add(id);
      search.hiddenNotPublicDomain += 1;
      existing?.remove();
      search.cards.delete(id);
      continue;
    }
    if (existing && !existing.classList.contains('pending')) continue;
    const card = objectCard(record);
    if (existing) {
      const focused = existing.contains(document.activeElement);
      existing.replaceWith(card);
      if (focused) card.querySelector('a').focus();
    } else {
      results.append(card);
      own.add(id);
    }
    search.cards.set(id, card);
  }
  // A placeholder whose object turned out missing or without an image goes: the line of losses counts it.
  for (const id of [...page.missing, ...page.withoutImage]) {
    search.cards.get(id)?.remove();
    search.cards.delete(id);
  }
  for (const id of page.pending) {
    if (search.cards.has(id) || search.hidden.has(id)) continue;
    const card = placeholderCard(id);
    results.append(card);
    search.cards.set(id, card);
    own.add(id);
  }
  // This page's cards are the last ones: moving them to the end in order sorts them.
  const focused = document.activeElement;
  for (const id of [...page.objects.map((record) => record.objectID), ...page.pending]) {
    const card = own.has(id) && search.cards.get(id);
    if (card) results.append(card);
  }
  if (focused && document.contains(focused) && document.activeElement !== focused) focused.focus();
  showLosses();
}

/** A result: a public-domain object opens its detail view; the rest link out through /open. */
function objectCard(record) {
  const card = element('li', 'card');
  card.dataset.id = String(record.objectID);
  const link = element('a');
  if (record.isPublicDomain) {
    link.href = `#/objects/${record.objectID}`;
  } else {
    inNewTab(link).href = `/open/${record.objectID}`;
    link.dataset.linkOut = 'true';
    card.classList.add('link-out');
  }
  const frame = element('span', 'frame');
  const src = imageURL(record.primaryImageSmall) || imageURL(record.primaryImage);
  if (src) {
    const image = element('img');
    image.loading = 'lazy';
    image.decoding = 'async';
    image.alt = altText(record);
    image.addEventListener('error', () => frame.classList.add('broken'), { once: true });
    image.src = src;
    frame.append(image);
  } else {
    frame.classList.add('no-image');
    frame.append(element('span', 'frame-note', 'No image'));
  }
  link.append(frame);
  link.append(element('span', 'title', record.title || `Object ${record.objectID}`));
  if (byline(record)) link.append(element('span', 'byline', byline(record)));
  if (!record.isPublicDomain) link.append(element('span', 'badge', 'On metmuseum.org ↗'));
  card.append(link);
  return card;
}

function placeholderCard(id) {
  const card = element('li', 'card pending');
  card.dataset.id = String(id);
  const link = element('a');
  link.href = `#/objects/${id}`;
  link.setAttribute('aria-label', `Object ${id}, still loading`);
  link.append(element('span', 'frame'), element('span', 'title', 'Loading…'), element('span', 'byline', `Object ${id}`));
  card.append(link);
  return card;
}

/** Stops the search in progress: its request is abandoned (the server's own cancellation applies). */
function stopSearch({ silently = false } = {}) {
  const controller = search.controller;
  const wasRunning = search.busy;
  if (controller) controller.abort();
  setBusy(false);
  if (silently || !wasRunning) return;
  for (const card of search.cards.values()) card.classList.add('stopped');
  setStatus('stopped', 'Stopped.', `${search.arrived} of ${search.asked} objects had arrived.`);
}

async function loadMore() {
  const controller = search.controller;
  if (!search.next || search.busy || !controller || controller.signal.aborted) return;
  const url = search.next;
  search.next = null;
  $('more').hidden = true;
  if (await loadPage(url, controller)) return;
  // Failed: the same page can be asked for again.
  if (controller === search.controller && !controller.signal.aborted) {
    search.next = url;
    $('more').hidden = false;
  }
}

let endObserver = null;

/** Loads the next page when the end of the results scrolls into view. */
function observeEnd() {
  if (!('IntersectionObserver' in window)) return;
  endObserver ??= new IntersectionObserver((entries) => {
    if (entries.some((entry) => entry.isIntersecting)) loadMore();
  }, { rootMargin: '200px' });
  endObserver.disconnect();
  endObserver.observe($('sentinel'));
}

// MARK: Keyboard

/** Arrow keys move through the results as through a grid; Home and End to the ends. */
function moveInGrid(event) {
  const links = [...$('results').querySelectorAll('.card > a')];
  const index = links.indexOf(document.activeElement);
  if (index < 0) return;
  const top = (link) => link.getBoundingClientRect().top;
  const columns = Math.max(1, links.filter((link) => top(link) === top(links[0])).length);
  const target = {
    ArrowRight: index + 1,
    ArrowLeft: index - 1,
    ArrowDown: index + columns,
    ArrowUp: index - columns,
    Home: 0,
    End: links.length - 1,
  }[event.key];
  if (target === undefined) return;
  event.preventDefault();
  links[Math.min(links.length - 1, Math.max(0, target))].focus();
}

function onKey(event) {
  const typing = event.target.closest('input, select, textarea');
  if (event.key === '/' && !typing && !$('detail').open) {
    event.preventDefault();
    $('q').focus();
    return;
  }
  if (event.target.closest('#results')) moveInGrid(event);
}

// MARK: Detail

/**
 * Where focus was before the detail view opened (the element, and a selector that finds its
 * successor if the element was replaced meanwhile, such as a placeholder filled in), and the
 * view's hash it was opened over: null when the page was opened on a detail view (a shared
 * link), whose close then shows the search.
 */
const detail = { returnFocus: null, returnSelector: null, returnHash: null, controller: null };

function detailRow(list, name, value) {
  if (!value) return;
  list.append(element('dt', null, name), element('dd', null, value));
}

/** A selector that finds `element` again, or its replacement: a result's card by its ID, a
 * widget entry by its deep link. */
function selectorFor(element) {
  const card = element?.closest?.('.card');
  if (card) return `#results .card[data-id="${card.dataset.id}"] > a`;
  const url = element?.dataset?.widgetUrl;
  return url && /^themet:\/\/\d+$/.test(url) ? `#widget-view a[data-widget-url="${url}"]` : null;
}

/**
 * Opens the detail view with a loading line, taking over from whatever it showed or was
 * loading: returns the AbortController of what it now shows.
 */
function openDialog(loading) {
  detail.controller?.abort();
  const controller = new AbortController();
  detail.controller = controller;
  const body = $('detail-body');
  body.replaceChildren(element('p', 'loading', loading));
  body.dataset.state = 'loading';
  const dialog = $('detail');
  if (!dialog.open) {
    detail.returnFocus = document.activeElement;
    detail.returnSelector = selectorFor(document.activeElement);
    dialog.showModal();
  }
  $('detail-close').focus();
  return controller;
}

/** The detail view's heading, which names the dialog. */
function detailTitle(text) {
  const title = element('h2', null, text);
  title.id = 'detail-title';
  return title;
}

/** The detail view says what went wrong (a problem document's title and detail). */
function showDetailProblem(problem) {
  const body = $('detail-body');
  body.replaceChildren(detailTitle(problem.title || 'Something went wrong'), element('p', 'problem-detail', problem.detail || ''));
  body.dataset.state = 'error';
}

/** Shows object `id`: its detail view when it is in the public domain, else its link out. */
async function showObject(id) {
  const controller = openDialog(`Loading object ${id}…`);
  const body = $('detail-body');
  let record;
  try {
    record = await getJSON(`/objects/${id}`, controller.signal);
  } catch (error) {
    if (error.name === 'AbortError' || controller !== detail.controller) return;
    showDetailProblem(error.problem || {});
    return;
  }
  if (controller !== detail.controller) return;
  body.replaceChildren(record.isPublicDomain ? publicDomainDetail(record, controller.signal) : linkOutDetail(record));
  body.dataset.state = record.isPublicDomain ? 'detail' : 'link-out';
}

function publicDomainDetail(record, signal) {
  const article = element('article', 'detail');
  const figure = element('figure', 'detail-image');
  const viewer = new ZoomViewer(altText(record));
  const caption = element('figcaption');
  const full = inNewTab(link('#', 'Full-size image ↗'));
  full.hidden = true;
  caption.append(viewer.hint, full);
  figure.append(viewer.element, caption);
  const text = element('div', 'detail-text');
  text.append(detailTitle(record.title || `Object ${record.objectID}`));
  const artist = [record.artistDisplayName, record.artistDisplayBio].filter(Boolean).join(', ');
  if (artist) text.append(element('p', 'artist', artist));
  const facts = element('dl', 'facts');
  detailRow(facts, 'Date', record.objectDate);
  detailRow(facts, 'Medium', record.medium);
  detailRow(facts, 'Dimensions', record.dimensions);
  detailRow(facts, 'Credit line', record.creditLine);
  detailRow(facts, 'Department', record.department);
  detailRow(facts, 'Accession number', record.accessionNumber);
  const more = element('div', 'more');
  text.append(facts, more);
  const links = element('p', 'links');
  links.append(link(`/iiif/${record.objectID}/manifest.json`, 'IIIF manifest'),
    link(`/objects/${record.objectID}`, 'JSON record'));
  if (typeof record.objectURL === 'string' && /^https:\/\/(www\.)?metmuseum\.org\//.test(record.objectURL)) {
    links.append(inNewTab(link(record.objectURL, 'On metmuseum.org ↗')));
  }
  text.append(links);
  article.append(figure, text);

  const show = (picture) => {
    viewer.show(picture.service, signal);
    full.href = picture.original || picture.service + '/full/max/0/default.jpg';
    full.hidden = false;
  };
  pictures(record.objectID, signal).then((list) => {
    if (list.length === 0) return viewer.unavailable('This object has no picture this server can show.');
    show(list[0]);
    if (list.length > 1) showMorePictures(more, list, show);
  }).catch((error) => {
    if (error.name !== 'AbortError') viewer.unavailable(error.problem?.title || 'The pictures could not be listed.');
  });
  return article;
}

/**
 * The pictures of public-domain object `id` this server serves through the IIIF Image API, in the
 * manifest's order (its canvas `n` is the service `/iiif/{id}/{n}`): `{ n, service, original }`,
 * `original` being this server's copy of the Met's file (or null).
 */
async function pictures(id, signal) {
  const manifest = await getJSON(`/iiif/${id}/manifest.json`, signal);
  return (manifest.items || []).flatMap((canvas, n) => {
    const body = canvas.items?.[0]?.items?.[0]?.body;
    if (!body?.service?.length) return [];
    return [{ n, service: `/iiif/${id}/${n}`, original: imageURL(body.id) }];
  });
}

/** The strip of an object's pictures under its facts: a small IIIF thumbnail of each, which shows
 * that picture in the viewer. */
function showMorePictures(container, list, show) {
  container.append(element('h3', null, `Pictures (${list.length})`));
  const strip = element('ul', 'more-images');
  for (const [index, picture] of list.entries()) {
    const item = element('li');
    const button = element('button');
    button.type = 'button';
    button.setAttribute('aria-label', `Show picture ${index + 1} of ${list.length}`);
    if (index === 0) button.setAttribute('aria-pressed', 'true');
    const thumb = element('img');
    thumb.loading = 'lazy';
    thumb.alt = '';
    thumb.addEventListener('error', () => button.classList.add('broken'), { once: true });
    thumb.src = `${picture.service}/full/!128,128/0/default.jpg`;
    button.append(thumb);
    button.addEventListener('click', () => {
      for (const other of strip.querySelectorAll('button')) other.setAttribute('aria-pressed', String(other === button));
      show(picture);
    });
    item.append(button);
    strip.append(item);
  }
  container.append(strip);
}

// MARK: Deep zoom

/**
 * A picture of the IIIF Image API (`/iiif/{id}/{n}`), fitted to its box and zoomable: drag or
 * arrow keys to move, the wheel, a double click, `+`/`-` or a pinch to zoom, `0` to fit again.
 * At the fitted size it shows one of the picture's `sizes` (shared by everyone who looks, so
 * usually a cache hit); zoomed in past that, the `tiles` of the scale factor that matches the
 * screen's pixels, for the part in view only, over the fitted picture (which shows, blurred,
 * until they arrive). `element` is the viewer, `hint` a line saying how to use it.
 */
class ZoomViewer {
  constructor(label) {
    this.element = element('div', 'viewer');
    this.stage = element('div', 'stage');
    this.stage.tabIndex = 0;
    this.stage.setAttribute('role', 'img');
    this.stage.setAttribute('aria-label', label);
    this.stage.setAttribute('aria-roledescription', 'zoomable picture');
    this.stage.dataset.state = 'loading';
    this.layer = element('div', 'layer');
    this.note = element('p', 'viewer-note', 'Loading the picture…');
    this.stage.append(this.layer, this.note);
    const controls = element('div', 'zoom-controls');
    for (const [text, name, action] of [
      ['+', 'Zoom in', () => this.zoomBy(1.6)],
      ['−', 'Zoom out', () => this.zoomBy(1 / 1.6)],
      ['Fit', 'Fit the picture', () => this.fit()],
    ]) {
      const button = element('button', null, text);
      button.type = 'button';
      button.setAttribute('aria-label', name);
      button.addEventListener('click', action);
      controls.append(button);
    }
    this.element.append(this.stage, controls);
    this.hint = element('span', 'hint', 'Zoom with + and −, the wheel or a pinch; drag or use the arrow keys to move; 0 fits.');
    /** The picture: its service, size (px), tile side (px) and scale factors; null until known. */
    this.picture = null;
    /** Tiles on screen by `${scale}/${column}/${row}`. */
    this.tiles = new Map();
    /** CSS px of the box per picture px, and where the picture's top left corner is in the box. */
    this.zoom = 1;
    this.x = 0;
    this.y = 0;
    this.pointers = new Map();
    this.frame = 0;
    this.listen();
  }

  /** Shows the picture of `service` (its info.json first), fitted. */
  async show(service, signal) {
    this.service = service;
    this.picture = null;
    this.layer.replaceChildren();
    this.tiles.clear();
    this.stage.dataset.state = 'loading';
    this.note.textContent = 'Loading the picture…';
    this.note.hidden = false;
    let info;
    try {
      info = await getJSON(`${service}/info.json`, signal);
    } catch (error) {
      if (error.name !== 'AbortError' && this.service === service) {
        this.unavailable(error.problem?.title || 'The picture could not be loaded.');
      }
      return;
    }
    if (this.service !== service) return;
    const tiles = info.tiles?.[0] || { width: 512, scaleFactors: [1] };
    this.picture = {
      service, width: info.width, height: info.height, tile: tiles.width, tileHeight: tiles.height || tiles.width,
      scales: [...tiles.scaleFactors].sort((a, b) => a - b), sizes: info.sizes || [],
    };
    this.layer.style.width = `${info.width}px`;
    this.layer.style.height = `${info.height}px`;
    this.base = element('img', 'base');
    this.base.alt = '';
    this.base.draggable = false;
    this.base.addEventListener('load', () => {
      this.note.hidden = true;
      this.stage.dataset.state = 'ready';
    }, { once: true });
    this.base.addEventListener('error', () => this.unavailable('The picture could not be loaded.'), { once: true });
    this.layer.append(this.base);
    this.fit();
    const size = this.baseSize();
    this.baseWidth = size.width;
    this.base.src = `${service}/full/${size.width},${size.height}/0/default.jpg`;
  }

  /** Says why there is no picture. */
  unavailable(reason) {
    this.picture = null;
    this.layer.replaceChildren();
    this.tiles.clear();
    this.stage.dataset.state = 'error';
    this.note.textContent = reason;
    this.note.hidden = false;
  }

  /** The smallest of the picture's `sizes` that fills the fitted box at this screen's density. */
  baseSize() {
    const wanted = this.picture.width * this.fitZoom() * devicePixelRatio;
    const sizes = [...this.picture.sizes].sort((a, b) => a.width - b.width);
    return sizes.find((size) => size.width >= wanted) || sizes[sizes.length - 1]
      || { width: this.picture.width, height: this.picture.height };
  }

  box() {
    return { width: this.stage.clientWidth, height: this.stage.clientHeight };
  }

  fitZoom() {
    const box = this.box();
    return Math.min(box.width / this.picture.width, box.height / this.picture.height) || 1;
  }

  /** At most four screen pixels per picture pixel, and never less than fitted. */
  maxZoom() {
    return Math.max(this.fitZoom(), 4 / devicePixelRatio);
  }

  fit() {
    if (!this.picture) return;
    this.zoom = this.fitZoom();
    this.fitted = true;
    this.place();
  }

  /** Zooms by `factor` about the point (`px`, `py`) of the box (its centre by default). */
  zoomBy(factor, px, py) {
    if (!this.picture) return;
    const box = this.box();
    const cx = px ?? box.width / 2;
    const cy = py ?? box.height / 2;
    const zoom = Math.min(this.maxZoom(), Math.max(this.fitZoom(), this.zoom * factor));
    this.x = cx - ((cx - this.x) * zoom) / this.zoom;
    this.y = cy - ((cy - this.y) * zoom) / this.zoom;
    this.zoom = zoom;
    this.fitted = zoom === this.fitZoom();
    this.place();
  }

  moveBy(dx, dy) {
    if (!this.picture) return;
    this.x += dx;
    this.y += dy;
    this.place();
  }

  /** Keeps the picture over the box (centred along a side where it is smaller), then draws. */
  place() {
    const box = this.box();
    const width = this.picture.width * this.zoom;
    const height = this.picture.height * this.zoom;
    if (this.fitted) {
      this.x = (box.width - width) / 2;
      this.y = (box.height - height) / 2;
    }
    this.x = width <= box.width ? (box.width - width) / 2 : Math.min(0, Math.max(box.width - width, this.x));
    this.y = height <= box.height ? (box.height - height) / 2 : Math.min(0, Math.max(box.height - height, this.y));
    if (!this.frame) this.frame = requestAnimationFrame(() => this.draw());
  }

  /** The tiles' scale factor for the zoom: the largest that still gives a picture pixel per
   * screen pixel; null while the fitted picture is sharp enough. */
  scale() {
    const shown = this.picture.width * this.zoom * devicePixelRatio;
    if (shown <= this.baseWidth * 1.05) return null;
    const wanted = 1 / (this.zoom * devicePixelRatio);
    return this.picture.scales.filter((factor) => factor <= wanted).pop() || this.picture.scales[0];
  }

  draw() {
    this.frame = 0;
    if (!this.picture) return;
    this.layer.style.transform = `translate(${this.x}px, ${this.y}px) scale(${this.zoom})`;
    this.stage.dataset.zoom = (this.zoom / this.fitZoom()).toFixed(3);
    const scale = this.scale();
    this.stage.dataset.scale = scale ?? '';
    const wanted = new Set();
    if (scale) {
      const { width, height } = this.picture;
      const box = this.box();
      const spanX = this.picture.tile * scale;
      const spanY = this.picture.tileHeight * scale;
      const left = Math.max(0, -this.x / this.zoom);
      const top = Math.max(0, -this.y / this.zoom);
      const right = Math.min(width, (box.width - this.x) / this.zoom);
      const bottom = Math.min(height, (box.height - this.y) / this.zoom);
      for (let row = Math.floor(top / spanY); row * spanY < bottom; row += 1) {
        for (let column = Math.floor(left / spanX); column * spanX < right; column += 1) {
          const key = `${scale}/${column}/${row}`;
          wanted.add(key);
          if (!this.tiles.has(key)) this.addTile(key, column * spanX, row * spanY, spanX, spanY, scale);
        }
      }
    }
    // Tiles of another scale stay under the new ones until every one in view has arrived.
    const arrived = [...wanted].every((key) => this.tiles.get(key).dataset.loaded);
    for (const [key, tile] of this.tiles) {
      const current = key.startsWith(`${scale}/`);
      if ((current && !wanted.has(key)) || (!current && arrived)) {
        tile.remove();
        this.tiles.delete(key);
      }
    }
  }

  /** Tile `key` of the region at (`x`, `y`), `spanX` × `spanY` picture px at most, at `scale`. */
  addTile(key, x, y, spanX, spanY, scale) {
    const width = Math.min(spanX, this.picture.width - x);
    const height = Math.min(spanY, this.picture.height - y);
    const tile = element('img', 'tile');
    tile.alt = '';
    tile.draggable = false;
    tile.dataset.scale = scale;
    tile.style.left = `${x}px`;
    tile.style.top = `${y}px`;
    tile.style.width = `${width}px`;
    tile.style.height = `${height}px`;
    tile.addEventListener('load', () => {
      tile.dataset.loaded = 'true';
      if (!this.frame) this.frame = requestAnimationFrame(() => this.draw());
    }, { once: true });
    tile.addEventListener('error', () => { tile.dataset.loaded = 'failed'; }, { once: true });
    tile.src = `${this.picture.service}/${x},${y},${width},${height}/`
      + `${Math.ceil(width / scale)},${Math.ceil(height / scale)}/0/default.jpg`;
    this.layer.append(tile);
    this.tiles.set(key, tile);
  }

  listen() {
    const stage = this.stage;
    const point = (event) => {
      const rect = stage.getBoundingClientRect();
      return { x: event.clientX - rect.left, y: event.clientY - rect.top };
    };
    stage.addEventListener('wheel', (event) => {
      if (!this.picture) return;
      event.preventDefault();
      const at = point(event);
      this.zoomBy(Math.exp(-event.deltaY * (event.deltaMode === 1 ? 0.05 : 0.002)), at.x, at.y);
    }, { passive: false });
    stage.addEventListener('dblclick', (event) => {
      const at = point(event);
      this.zoomBy(event.shiftKey ? 1 / 2 : 2, at.x, at.y);
    });
    stage.addEventListener('pointerdown', (event) => {
      stage.setPointerCapture(event.pointerId);
      this.pointers.set(event.pointerId, point(event));
      this.pinch = null;
    });
    stage.addEventListener('pointermove', (event) => {
      const last = this.pointers.get(event.pointerId);
      if (!last) return;
      const now = point(event);
      this.pointers.set(event.pointerId, now);
      if (this.pointers.size === 1) {
        this.moveBy(now.x - last.x, now.y - last.y);
        return;
      }
      // Two fingers: zoom by how far apart they are, about the point between them.
      const [a, b] = [...this.pointers.values()];
      const distance = Math.hypot(a.x - b.x, a.y - b.y);
      const middle = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
      if (this.pinch && distance > 0) {
        this.moveBy(middle.x - this.pinch.middle.x, middle.y - this.pinch.middle.y);
        this.zoomBy(distance / this.pinch.distance, middle.x, middle.y);
      }
      this.pinch = { distance, middle };
    });
    const release = (event) => {
      this.pointers.delete(event.pointerId);
      this.pinch = null;
    };
    stage.addEventListener('pointerup', release);
    stage.addEventListener('pointercancel', release);
    stage.addEventListener('keydown', (event) => {
      const step = 0.1 * Math.min(this.box().width, this.box().height);
      const actions = {
        '+': () => this.zoomBy(1.6),
        '=': () => this.zoomBy(1.6),
        '-': () => this.zoomBy(1 / 1.6),
        _: () => this.zoomBy(1 / 1.6),
        0: () => this.fit(),
        ArrowLeft: () => this.moveBy(step, 0),
        ArrowRight: () => this.moveBy(-step, 0),
        ArrowUp: () => this.moveBy(0, step),
        ArrowDown: () => this.moveBy(0, -step),
      };
      const action = actions[event.key];
      if (!action || event.ctrlKey || event.metaKey || event.altKey) return;
      event.preventDefault();
      action();
    });
    new ResizeObserver(() => {
      if (!this.picture) return;
      if (this.fitted) this.fit();
      else this.zoomBy(1);
    }).observe(stage);
  }
}

function linkOutDetail(record) {
  const article = element('article', 'detail link-out');
  article.append(detailTitle(record.title || `Object ${record.objectID}`));
  if (byline(record)) article.append(element('p', 'artist', byline(record)));
  article.append(element('p', null,
    'This object is not in the public domain, so the Met shares no image of it through its API. '
    + 'Its page on the Met’s website has what the Met can show.'));
  const out = inNewTab(link(`/open/${record.objectID}`, 'Open it on metmuseum.org ↗'));
  out.className = 'button';
  out.dataset.linkOut = 'true';
  article.append(out);
  return article;
}

function closeDetail() {
  const dialog = $('detail');
  if (dialog.open) dialog.close();
}

/** The dialog closed (button, Esc): back to the view it was opened over. */
function onDetailClosed() {
  detail.controller?.abort();
  if (location.hash.startsWith('#/objects/') || location.hash.startsWith('#/open')) {
    if (detail.returnHash === null) {
      history.replaceState(null, '', '#/');
      detail.returnHash = '#/';
    } else {
      history.back();
    }
  }
  const focus = detail.returnFocus && document.contains(detail.returnFocus)
    ? detail.returnFocus
    : detail.returnSelector && document.querySelector(detail.returnSelector);
  detail.returnFocus = null;
  detail.returnSelector = null;
  focus?.focus();
}

// MARK: Deep links

/** The object ID a `themet://{id}` link names, or null. */
function deepLinkID(url) {
  const match = /^themet:\/\/(\d{1,10})$/.exec(url || '');
  return match ? match[1] : null;
}

/** Where a `themet://` link leads, as the server resolves it (/open?url=…&format=json). */
function resolveDeepLink(url, signal) {
  return getJSON(`/open?url=${encodeURIComponent(url)}&format=json`, signal);
}

/** `#/open?url=themet://{id}`: resolved through /open, then the detail view or the link out. */
async function openDeepLink(url) {
  const controller = openDialog('Opening the link…');
  if (!deepLinkID(url)) {
    showDetailProblem({ title: 'Not a deep link', detail: 'A deep link looks like themet://436535.' });
    return;
  }
  try {
    // The server says where the link leads; either way the object's own view says it best.
    const target = await resolveDeepLink(url, controller.signal);
    if (controller !== detail.controller) return;
    history.replaceState(null, '', `#/objects/${target.objectID}`);
    showObject(target.objectID);
  } catch (error) {
    if (error.name === 'AbortError' || controller !== detail.controller) return;
    showDetailProblem(error.problem || {});
  }
}

// MARK: Random

/** "Surprise me": a random public-domain object with an image (of the chosen department),
 * opened in the detail view. The button stays focusable meanwhile (focus returns to it). */
async function surpriseMe() {
  const button = $('random');
  if (button.getAttribute('aria-busy') === 'true') return;
  button.setAttribute('aria-busy', 'true');
  const parameters = new URLSearchParams({ format: 'json', hasImages: 'true', isPublicDomain: 'true' });
  const department = $('search-form').departmentId.value;
  if (department) parameters.set('departmentId', department);
  try {
    const drawn = await getJSON(`/random?${parameters}`);
    location.hash = `#/objects/${drawn.objectID}`;
  } catch (error) {
    const problem = error.problem || {};
    if ($('widget-view').hidden) {
      showFailure(error);
    } else {
      $('widget-status').textContent = `${problem.title || 'Something went wrong'}: ${problem.detail || ''}`;
    }
  } finally {
    button.removeAttribute('aria-busy');
  }
}

// MARK: Widget preview

/** The timelines' requests, and whether they are on screen (closing a detail view opened from
 * them comes back without asking again). */
const widget = { controller: null, shown: false };

async function showWidget() {
  if (!$('widget-view').hidden && widget.shown) return;
  showView('widget');
  widget.controller?.abort();
  const controller = new AbortController();
  widget.controller = controller;
  const status = $('widget-status');
  status.textContent = 'Loading the timelines…';
  try {
    const [medium, large] = await Promise.all(['medium', 'large'].map(
      (family) => getJSON(`/widget/timeline?family=${family}`, controller.signal)));
    if (controller !== widget.controller) return;
    showTimeline(medium, 'medium', controller.signal);
    showTimeline(large, 'large', controller.signal);
    widget.shown = true;
    status.textContent = medium.entries.length
      ? `${medium.entries.length} entries, one every ${Math.round(medium.interval / 60)} minutes, from the ${medium.source === 'store' ? 'latest search' : 'search'}.`
      : 'Nothing stored yet: search for something first.';
  } catch (error) {
    if (error.name === 'AbortError') return;
    const problem = error.problem || {};
    status.textContent = `${problem.title || 'Something went wrong'}: ${problem.detail || ''}`;
  }
}

/** The entry the widget shows now: the last one whose date has come (or the first). */
function currentEntry(entries) {
  const now = Date.now();
  let current = entries[0];
  for (const entry of entries) if (Date.parse(entry.date) <= now) current = entry;
  return current;
}

/**
 * A link that taps through as the widget's does: its `themet://` URL resolved through /open, to
 * the detail view (public domain) or the Met's page (the rest). Until resolved, it points at the
 * entry's `openURL`, which the server redirects the same way.
 */
function entryLink(entry, signal) {
  const anchor = element('a');
  anchor.href = entry.openURL;
  anchor.dataset.widgetUrl = entry.widgetURL;
  if (deepLinkID(entry.widgetURL)) {
    resolveDeepLink(entry.widgetURL, signal).then((target) => {
      if (target.target === 'detail') {
        anchor.href = `#/objects/${target.objectID}`;
      } else {
        inNewTab(anchor).href = target.location;
        anchor.dataset.linkOut = 'true';
      }
      anchor.dataset.resolved = target.target;
    }).catch(() => {});
  }
  return anchor;
}

function showTimeline(timeline, family, signal) {
  const face = $(`widget-${family}`);
  const list = $(`timeline-${family}`);
  list.replaceChildren();
  if (timeline.entries.length === 0) {
    const placeholder = timeline.placeholder || { title: 'The Met', subtitle: '' };
    const empty = element('div', 'face placeholder');
    empty.append(element('span', 'title', placeholder.title), element('span', 'byline', placeholder.subtitle));
    face.replaceChildren(empty);
    return;
  }
  const current = currentEntry(timeline.entries);
  const link = entryLink(current, signal);
  link.className = 'face';
  link.setAttribute('aria-label', clip(`Widget: ${current.title}${current.artist ? `, ${current.artist}` : ''}`));
  const frame = element('span', 'frame');
  const src = servedImageURL(current.imageURL);
  if (src) {
    const image = element('img');
    image.alt = '';
    image.addEventListener('error', () => frame.classList.add('broken'), { once: true });
    image.src = src;
    frame.append(image);
  } else {
    frame.classList.add('no-image');
  }
  const text = element('span', 'text');
  text.append(element('span', 'title', current.title || `Object ${current.objectID}`));
  if (current.artist) text.append(element('span', 'byline', current.artist));
  if (family === 'large') {
    for (const value of [current.objectDate, current.medium, current.creditLine]) {
      if (value) text.append(element('span', 'fact', value));
    }
  }
  link.append(frame, text);
  face.replaceChildren(link);

  const dates = new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' });
  for (const entry of timeline.entries) {
    const item = element('li', entry === current ? 'now' : null);
    const anchor = entryLink(entry, signal);
    const time = element('time', null, dates.format(new Date(entry.date)));
    time.dateTime = entry.date;
    anchor.append(time, element('span', 'title', entry.title || `Object ${entry.objectID}`));
    if (entry === current) anchor.setAttribute('aria-current', 'true');
    item.append(anchor);
    list.append(item);
  }
}

// MARK: Views and routing

function showView(name) {
  if (name !== 'widget') widget.shown = false;
  $('search-view').hidden = name !== 'search';
  $('widget-view').hidden = name !== 'widget';
  $('nav-search').setAttribute('aria-current', String(name === 'search'));
  $('nav-widget').setAttribute('aria-current', String(name === 'widget'));
}

function route() {
  const hash = location.hash || '#/';
  const [path, query = ''] = hash.slice(1).split('?');
  const object = /^\/objects\/(\d{1,10})$/.exec(path);
  if (object) {
    if ($('widget-view').hidden && $('search-view').hidden) showView('search');
    showObject(object[1]);
    return;
  }
  if (path === '/open') {
    openDeepLink(new URLSearchParams(query).get('url'));
    return;
  }
  closeDetail();
  detail.returnHash = hash;
  if (path === '/widget') {
    showWidget();
  } else if (path === '/search') {
    showSearch(new URLSearchParams(query));
  } else {
    showView('search');
  }
}

async function loadDepartments() {
  try {
    const { departments } = await getJSON('/departments');
    const select = $('departmentId');
    for (const department of departments) {
      const option = element('option', null, department.displayName);
      option.value = String(department.departmentId);
      select.append(option);
    }
    select.value = select.dataset.wanted || '';
  } catch {
    $('departmentId').title = 'The department list could not be loaded.';
  }
}

function submitSearch(event) {
  event.preventDefault();
  if (!checkYears()) return;
  const parameters = formParameters();
  if (!parameters.get('q') && parameters.get('source') !== 'local') {
    $('q').focus();
    setStatus('idle', 'Type something to search for.', 'Or tick “This server’s copy” to search what it holds by the filters alone.');
    return;
  }
  const hash = `#/search?${parameters}`;
  if (location.hash === hash) {
    search.key = null; // The same search again: run it anew.
    showSearch(parameters);
  } else {
    location.hash = hash;
  }
}

function start() {
  // The skip link moves focus without touching the hash (the hash is the view).
  document.querySelector('.skip').addEventListener('click', (event) => {
    event.preventDefault();
    $('results').focus();
  });
  $('search-form').addEventListener('submit', submitSearch);
  $('stop').addEventListener('click', () => stopSearch());
  $('more').addEventListener('click', loadMore);
  $('random').addEventListener('click', surpriseMe);
  $('sort').addEventListener('change', syncOrder);
  $('dateBegin').addEventListener('input', () => $('dateEnd').setCustomValidity(''));
  $('dateEnd').addEventListener('input', () => $('dateEnd').setCustomValidity(''));
  $('detail-close').addEventListener('click', closeDetail);
  $('detail').addEventListener('close', onDetailClosed);
  document.addEventListener('keydown', onKey);
  window.addEventListener('hashchange', route);
  syncOrder();
  loadDepartments();
  route();
}

start();

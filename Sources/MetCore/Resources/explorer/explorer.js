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
/** Only images from the Met's image host are shown (the Content-Security-Policy says the same). */
const IMAGE_HOST = 'https://images.metmuseum.org/';
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

/** An element with a class and text. */
function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

/** `url` when it is an image on the Met's image host, else null. */
function imageURL(url) {
  return typeof url === 'string' && url.startsWith(IMAGE_HOST) ? url : null;
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
  return record.artistDisplayName ? `${title}, by ${record.artistDisplayName}` : title;
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
  setStatus('loading', `Searching for ${quoted(search.words)}…`, search.asked
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
  setStatus('results', `${FORMAT.format(search.total)} result${search.total === 1 ? '' : 's'} for ${quoted(search.words)}; ${shown} shown.`, detail);
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
 * public-domain filter is the explorer's own: the Met's search has none). */
function searchURL(parameters) {
  const api = new URLSearchParams();
  for (const name of SEARCH_PARAMETERS) {
    if (parameters.has(name)) api.set(name, parameters.get(name));
  }
  api.set('limit', String(PAGE_SIZE));
  api.set('wait', String(WAIT_MS));
  return `/search?${api}`;
}

/** Starts the search the hash names, unless it is the one on screen. */
function showSearch(parameters) {
  showView('search');
  const key = parameters.toString();
  if (key === search.key) return;
  fillForm(parameters);
  if (!(parameters.get('q') || '').trim()) {
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
  search.words = parameters.get('q').trim();
  search.publicDomainOnly = parameters.get('isPublicDomain') === 'true';
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
      const before = search.arrived;
      counted = count(page, counted);
      showPage(page, own);
      search.total = page.total;
      if (page.total === 0) {
        setStatus('empty', `Nothing found for ${quoted(search.words)}.`, 'Try other words, or fewer filters.');
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
  body.replaceChildren(record.isPublicDomain ? publicDomainDetail(record) : linkOutDetail(record));
  body.dataset.state = record.isPublicDomain ? 'detail' : 'link-out';
}

function publicDomainDetail(record) {
  const article = element('article', 'detail');
  const figure = element('figure', 'detail-image');
  const main = imageURL(record.primaryImageSmall) || imageURL(record.primaryImage);
  const image = element('img');
  image.alt = altText(record);
  image.addEventListener('error', () => figure.classList.add('broken'));
  if (main) image.src = main;
  figure.append(image);
  const full = imageURL(record.primaryImage);
  if (full) {
    const caption = element('figcaption');
    caption.append(inNewTab(link(full, 'Full-size image ↗')));
    figure.append(caption);
  }
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
  text.append(facts);
  const extra = (record.additionalImages || []).map(imageURL).filter(Boolean);
  if (extra.length) {
    text.append(element('h3', null, `More images (${extra.length})`));
    const strip = element('ul', 'more-images');
    for (const [index, url] of [main, ...extra].filter(Boolean).entries()) {
      const item = element('li');
      const button = element('button');
      button.type = 'button';
      button.setAttribute('aria-label', `Show image ${index + 1} of ${extra.length + (main ? 1 : 0)}`);
      const thumb = element('img');
      thumb.loading = 'lazy';
      thumb.alt = '';
      thumb.src = url;
      button.append(thumb);
      button.addEventListener('click', () => { image.src = url; });
      item.append(button);
      strip.append(item);
    }
    text.append(strip);
  }
  const links = element('p', 'links');
  links.append(link(`/iiif/${record.objectID}/manifest.json`, 'IIIF manifest'),
    link(`/objects/${record.objectID}`, 'JSON record'));
  if (typeof record.objectURL === 'string' && /^https:\/\/(www\.)?metmuseum\.org\//.test(record.objectURL)) {
    links.append(inNewTab(link(record.objectURL, 'On metmuseum.org ↗')));
  }
  text.append(links);
  article.append(figure, text);
  return article;
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
  link.setAttribute('aria-label', `Widget: ${current.title}${current.artist ? `, ${current.artist}` : ''}`);
  const frame = element('span', 'frame');
  const src = imageURL(current.imageURL);
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
  if (!parameters.get('q')) {
    $('q').focus();
    setStatus('idle', 'Type something to search for.', '');
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

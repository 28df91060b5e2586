/*
 * gsf console: the page operators run a live game with, over /cs-api/v1/ only. Signing in
 * keeps the API token for this tab; without a token configured the page needs none. The
 * sections (accounts, live operations, audit trail) are chosen by the URL's hash.
 */
/* global document, location, window */
import { V1, get, onUnauthorized, session } from './console-api.js';
import { $, attempt, clearError, say, showError } from './console-ui.js';
import { initAccounts } from './console-accounts.js';
import { initLive } from './console-live.js';
import { initAudit, showAudit } from './console-audit.js';

const SECTIONS = ['accounts', 'live', 'audit'];
let started = false;

function showSection() {
  const wanted = location.hash.slice(1);
  const name = SECTIONS.includes(wanted) ? wanted : 'accounts';
  for (const s of SECTIONS) $(s).hidden = s !== name;
  $('sign-in').hidden = true;
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.section === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (name === 'audit') void showAudit();
}

function askForToken() {
  for (const s of SECTIONS) $(s).hidden = true;
  $('sign-in').hidden = false;
  $('sign-out').hidden = true;
  document.body.dataset.state = 'signed-out';
  $('token').focus();
}

/** Asks the API whether the page may call it (with the token it has, if any); starts the sections if so. */
async function enter() {
  try {
    await get(`${V1}/editable-fields/`);
  } catch (err) {
    if (err.status === 401) {
      askForToken();
      if (session.token) showError(err);
      else say('Sign in with the API token.');
      return;
    }
    showError(err);
    return;
  }
  clearError();
  $('sign-out').hidden = !session.token;
  if (!started) {
    started = true;
    await Promise.all([initAccounts(), initLive()]);
    initAudit();
  }
  showSection();
  document.body.dataset.state = 'ready';
  say(session.token ? 'Signed in.' : 'Ready (the API asks for no token).');
}

function init() {
  $('operator').value = session.operator;
  $('operator').addEventListener('input', () => { session.operator = $('operator').value.trim(); });
  $('sign-in-form').addEventListener('submit', (e) => {
    e.preventDefault();
    session.token = $('token').value.trim();
    $('token').value = '';
    void attempt(enter);
  });
  $('sign-out').addEventListener('click', () => {
    session.token = '';
    say('Signed out.');
    askForToken();
  });
  onUnauthorized(() => askForToken());
  window.addEventListener('hashchange', () => { if (document.body.dataset.state === 'ready') showSection(); });
  void attempt(enter);
}

init();

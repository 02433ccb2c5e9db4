// Back from the eSign Service Provider: the ESP sends the signer to /sign/return?txn=..., an address without the
// signer token. The signing page left its own path (/sign/{token}) in this tab's sessionStorage before it handed
// the signer over; this page goes back there. Without it (another tab or browser, storage cleared) it says what
// to do instead.

const RETURN_PATH_KEY = 'esign.signerPath';
const SIGNER_PATH = /^\/sign\/(?!return\/?$)[^/?#\\]+\/?$/;

function storedPath() {
  try {
    const path = sessionStorage.getItem(RETURN_PATH_KEY);
    return path && SIGNER_PATH.test(path) ? path : null;
  } catch {
    return null;
  }
}

const path = storedPath();
if (path) {
  const txn = new URLSearchParams(location.search).get('txn');
  location.replace(txn && /^[\w.:-]{1,128}$/.test(txn) ? `${path}?esp=${encodeURIComponent(txn)}` : path);
} else {
  // In the shell's language (the browser's): the catalog is loaded only here, so the way back above waits for nothing.
  const { t, useLanguage } = await import('./i18n.js');
  await useLanguage(document.documentElement.lang || 'en').catch(() => useLanguage('en'));
  const section = document.getElementById('return');
  const title = document.getElementById('return-title');
  const text = document.getElementById('return-text');
  const platform = document.querySelector('.brand')?.textContent.trim() ?? '';
  section.dataset.screen = 'return-lost';
  section.classList.add('message--problem');
  document.title = t('return.lost_document_title', { platform });
  title.textContent = t('return.lost_title');
  text.textContent = t('return.lost_text');
  title.focus();
}

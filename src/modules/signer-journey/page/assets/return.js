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
  const section = document.getElementById('return');
  const title = document.getElementById('return-title');
  const text = document.getElementById('return-text');
  section.dataset.screen = 'return-lost';
  section.classList.add('message--problem');
  document.title = `Open your signing link again – ${document.title.split(' – ').slice(1).join(' – ')}`;
  title.textContent = 'Open your signing link again';
  text.textContent =
    'We could not take you back to your document from here. Open the signing link from your invitation email or message again: it shows whether your signature went through, and lets you try again if it did not.';
  title.focus();
}

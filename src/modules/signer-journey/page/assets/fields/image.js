// An image the signer applies (a company seal): a JPEG or PNG file, uploaded as soon as it is chosen, with a
// preview. It is not part of the values sent together: the upload is its value.

import { postBytes, describeError } from '../api.js';
import { announce, h } from '../dom.js';
import { clearEntryError, controlIdOf, describeInputs, labelText, messageSlots, showEntryError } from './common.js';

const MAX_BYTES = 2 * 1024 * 1024;
const TYPES = ['image/jpeg', 'image/png'];

export function draw(field, env) {
  const id = controlIdOf(field);
  const control = h('input', {
    type: 'file',
    id,
    class: 'field-control',
    accept: TYPES.join(','),
    'aria-required': field.required ? 'true' : null,
  });
  const { hintEl, errorEl } = messageSlots(id, 'A JPEG or PNG image, up to 2 MB. It is uploaded when you choose it.');
  const status = h(
    'p',
    { class: 'hint', role: 'status' },
    field.value ? 'An image is applied. Choose another to replace it.' : '',
  );
  const preview = h('img', { class: 'field-preview', alt: '', hidden: true });
  const wrapper = h(
    'div',
    { class: 'field field--image', dataset: { fieldId: field.field_id } },
    h('label', { for: id }, ...labelText(field)),
    hintEl,
    errorEl,
    control,
    status,
    preview,
  );
  const state = { uploaded: field.value !== null, uploading: null };
  const entry = {
    field,
    wrapper,
    focusEl: control,
    inputs: [control],
    hintEl,
    errorEl,
    read: () => undefined,
    problem: () => {
      if (state.uploading) return 'Wait until the image is uploaded.';
      return field.required && !state.uploaded ? 'Choose an image (JPEG or PNG).' : null;
    },
  };
  describeInputs(entry);
  control.addEventListener('change', () => {
    const file = control.files?.[0];
    if (file) state.uploading = upload(entry, file, { state, status, preview, env }).finally(() => (state.uploading = null));
  });
  return entry;
}

async function upload(entry, file, { state, status, preview, env }) {
  clearEntryError(entry);
  const refuse = (message) => {
    showEntryError(entry, message);
    announce(message, { assertive: true });
  };
  if (!TYPES.includes(file.type)) return refuse('Choose a JPEG or PNG image.');
  if (file.size > MAX_BYTES) return refuse('The image is larger than 2 MB. Choose a smaller one.');
  status.textContent = 'Uploading the image…';
  try {
    await postBytes(entry.field.upload_path.replace(/^\/signer-api/, ''), file);
  } catch (error) {
    status.textContent = state.uploaded ? 'The image applied before is kept.' : '';
    if (!env.failed(error)) refuse(describeError(error, { except: [] }));
    return;
  }
  state.uploaded = true;
  if (preview.src) URL.revokeObjectURL(preview.src);
  preview.src = URL.createObjectURL(file);
  preview.alt = `Preview of ${file.name}`;
  preview.hidden = false;
  status.textContent = 'Image uploaded.';
  announce('Image uploaded.');
}

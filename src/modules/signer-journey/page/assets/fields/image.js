// An image the signer applies (a company seal): a JPEG or PNG file, uploaded as soon as it is chosen, with a
// preview. It is not part of the values sent together: the upload is its value.

import { postBytes, describeError } from '../api.js';
import { announce, h } from '../dom.js';
import { t } from '../i18n.js';
import { clearEntryError, controlIdOf, describeInputs, labelText, messageSlots, showEntryError } from './common.js';

const MAX_MEGABYTES = 2;
const MAX_BYTES = MAX_MEGABYTES * 1024 * 1024;
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
  const { hintEl, errorEl } = messageSlots(id, t('fields.image_hint', { megabytes: MAX_MEGABYTES }));
  const status = h('p', { class: 'hint', role: 'status' }, field.value ? t('fields.image_applied') : '');
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
      if (state.uploading) return t('fields.image_wait');
      return field.required && !state.uploaded ? t('fields.image_required') : null;
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
  if (!TYPES.includes(file.type)) return refuse(t('fields.image_type'));
  if (file.size > MAX_BYTES) return refuse(t('fields.image_too_large', { megabytes: MAX_MEGABYTES }));
  status.textContent = t('fields.image_uploading');
  try {
    await postBytes(entry.field.upload_path.replace(/^\/signer-api/, ''), file);
  } catch (error) {
    status.textContent = state.uploaded ? t('fields.image_kept') : '';
    if (!env.failed(error)) refuse(describeError(error, { except: [] }));
    return;
  }
  state.uploaded = true;
  if (preview.src) URL.revokeObjectURL(preview.src);
  preview.src = URL.createObjectURL(file);
  preview.alt = t('fields.image_preview_alt', { name: file.name });
  preview.hidden = false;
  status.textContent = t('fields.image_uploaded');
  announce(t('fields.image_uploaded'));
}

// Renders every page of the document with pdf.js into canvases (pages are drawn when they come near the
// viewport, one at a time, so a long document does not hold every bitmap at once), with pdf.js's text layer
// over each (the words can be selected, and screen readers can read them), and the signer's own signature
// fields outlined on top, and the boxes of the fields they fill (a click or Enter on one goes to its control). Field coordinates are PDF points from the top-left of the page's crop box, y down;
// `page` is zero-based.

import { h } from './dom.js';
import { labelOf } from './fields/index.js';
import { t } from './i18n.js';

const PDFJS_BASE = document.querySelector('meta[name="pdfjs-base"]').content;
let pdfjsModule;

/** pdf.js, loaded once from this origin (its worker too). */
export function loadPdfjs() {
  pdfjsModule ??= import(`${PDFJS_BASE}pdf.min.mjs`).then((pdfjs) => {
    pdfjs.GlobalWorkerOptions.workerSrc = `${PDFJS_BASE}pdf.worker.min.mjs`;
    return pdfjs;
  });
  return pdfjsModule;
}

/** The field's rectangle as fractions of the rendered page (rotation and crop box included). */
function fieldBox(viewport, view, field) {
  const [x0, , , top] = view;
  const rect = viewport.convertToViewportRectangle([
    x0 + field.x,
    top - field.y - field.height,
    x0 + field.x + field.width,
    top - field.y,
  ]);
  const left = Math.min(rect[0], rect[2]);
  const upper = Math.min(rect[1], rect[3]);
  return {
    left: left / viewport.width,
    top: upper / viewport.height,
    width: Math.abs(rect[2] - rect[0]) / viewport.width,
    height: Math.abs(rect[3] - rect[1]) / viewport.height,
  };
}

const percent = (fraction) => `${(fraction * 100).toFixed(3)}%`;

/** Parses the document with pdf.js's fonts and character maps from this origin, and no eval or XFA. */
async function openPdf(pdfjs, bytes) {
  return pdfjs.getDocument({
    data: bytes,
    isEvalSupported: false,
    enableXfa: false,
    standardFontDataUrl: `${PDFJS_BASE}standard_fonts/`,
    cMapUrl: `${PDFJS_BASE}cmaps/`,
    cMapPacked: true,
  }).promise;
}

/** Draws one page at its frame's current width; returns that width (the page checks it again when done). */
async function drawPage(pdfjs, item) {
  const { page, canvas, frame } = item.pdf;
  const base = page.getViewport({ scale: 1 });
  const ratio = Math.min(window.devicePixelRatio || 1, 2);
  const cssWidth = frame.clientWidth || base.width;
  const viewport = page.getViewport({ scale: (cssWidth * ratio) / base.width });
  canvas.width = Math.floor(viewport.width);
  canvas.height = Math.floor(viewport.height);
  try {
    await page.render({ canvasContext: canvas.getContext('2d'), viewport }).promise;
    item.dataset.state = 'rendered';
    canvas.dataset.rendered = 'true';
  } catch {
    item.dataset.state = 'failed';
    frame.append(h('p', { class: 'page-failed' }, t('document.page_failed')));
  }
  try {
    // Laid out in CSS pixels: `--scale-factor` (CSS pixels per point) follows the frame's width.
    const cssViewport = page.getViewport({ scale: cssWidth / base.width });
    frame.style.setProperty('--scale-factor', String(cssViewport.scale));
    const container = h('div', { class: 'textLayer' });
    canvas.after(container);
    const textLayer = new pdfjs.TextLayer({ textContentSource: page.streamTextContent(), container, viewport: cssViewport });
    await textLayer.render();
    item.pdf.textLayer = textLayer;
  } catch {
    // The drawn page is still there; only its selectable text is missing.
  }
  return cssWidth;
}

/**
 * Pages are drawn one at a time, the first queued page of the document first; `redraw` queues a drawn page again.
 * Picking by the document's order, not by when a page was queued, draws a page zoomed twice in a row (once while it
 * was being drawn) at its final width before the pages after it, instead of after all of them.
 */
function pageDrawer(pdfjs, list, count, onRendered) {
  let rendered = 0;
  let drawing = false;
  const nextQueued = () => [...list.children].find((item) => item.dataset.state === 'queued');
  const drawQueued = async () => {
    if (drawing) return;
    drawing = true;
    try {
      for (let item = nextQueued(); item; item = nextQueued()) {
        const cssWidth = await drawPage(pdfjs, item);
        rendered++;
        onRendered?.(rendered, count);
        // Zoomed while this page was being drawn: draw it once more at the width it has now.
        const { frame } = item.pdf;
        if (item.dataset.state === 'rendered' && frame.clientWidth && Math.abs(frame.clientWidth - cssWidth) > 1) {
          redraw(item);
        }
      }
    } finally {
      drawing = false;
    }
  };
  const draw = (item) => {
    item.dataset.state = 'queued';
    void drawQueued();
  };
  const redraw = (item) => {
    item.pdf.frame.querySelectorAll('.textLayer, .page-failed').forEach((old) => old.remove());
    item.pdf.textLayer = null;
    draw(item);
  };
  return { draw, redraw };
}

/** A narrower or wider window: the canvases scale by CSS, the text layers are laid out again. */
function relayoutTextOnResize(list) {
  let resizeTimer;
  new ResizeObserver(() => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      for (const item of list.children) {
        const { page, frame, textLayer } = item.pdf ?? {};
        if (!textLayer || !frame.clientWidth) continue;
        const viewport = page.getViewport({ scale: frame.clientWidth / page.getViewport({ scale: 1 }).width });
        frame.style.setProperty('--scale-factor', String(viewport.scale));
        textLayer.update({ viewport });
      }
    }, 150);
  }).observe(list);
}

/** Places a box over the page at the field's rectangle. */
function placeBox(box, viewport, page, field) {
  const rect = fieldBox(viewport, page.view, field);
  box.style.left = percent(rect.left);
  box.style.top = percent(rect.top);
  box.style.width = percent(rect.width);
  box.style.height = percent(rect.height);
  return box;
}

/**
 * The boxes of the fields the signer fills or sees on this page: buttons that lead to the field's control. A field
 * on every page is on each page from its own on (the service places it on every page of the uploaded document).
 */
function formBoxes(viewport, page, index, form, onBoxChosen) {
  const here = form.filter((field) => field.page === index || (field.every_page && index > field.page));
  return here.map((field) => {
    const box = h(
      'button',
      {
        type: 'button',
        class: 'field-box field-box--form',
        'aria-label': t('document.go_to_field', { label: labelOf(field) }),
        dataset: { fieldId: field.field_id },
        on: { click: () => onBoxChosen?.(field.field_id) },
      },
      h('span', { class: 'field-box__tag', 'aria-hidden': 'true' }, labelOf(field)),
    );
    return placeBox(box, viewport, page, field);
  });
}

/** One page's list item, not drawn yet: its frame keeps the page's proportions, with the signer's fields outlined. */
function pageItem(page, index, count, fields, { form = [], onBoxChosen } = {}) {
  const viewport = page.getViewport({ scale: 1 });
  const mine = fields.filter((field) => field.page === index);
  const label = t('document.page_label', { page: index + 1, count, boxes: mine.length });
  const canvas = h('canvas', { class: 'page-canvas', role: 'img', 'aria-label': label, dataset: { page: String(index) } });
  const frame = h('div', { class: 'page-frame' }, canvas);
  // The frame keeps the page's proportions before it is drawn, so scrolling does not jump.
  frame.style.aspectRatio = `${viewport.width} / ${viewport.height}`;
  for (const field of mine) {
    const outline = h(
      'div',
      { class: 'field-box', 'aria-hidden': 'true' },
      h('span', { class: 'field-box__tag' }, t('document.your_signature')),
    );
    frame.append(placeBox(outline, viewport, page, field));
  }
  frame.append(...formBoxes(viewport, page, index, form, onBoxChosen));
  const item = h('li', { class: 'page', dataset: { state: 'waiting' } }, frame);
  item.pdf = { page, canvas, frame };
  return item;
}

/**
 * Fills `list` (an <ol>) with one item per page and draws them as they scroll into view.
 * Resolves with the page count once the document is parsed; `onRendered(count)` reports drawing progress;
 * `onBoxChosen(field_id)` runs when the signer picks the box of a field of `form`; `superseded()` says another
 * document took the list's place (the signer moved on before this one was parsed).
 */
export async function showDocument(list, bytes, fields, { onRendered, form, onBoxChosen, superseded } = {}) {
  const pdfjs = await loadPdfjs();
  const pdf = await openPdf(pdfjs, bytes);
  const count = pdf.numPages;
  // Another document of the envelope was chosen meanwhile: its pages, not these, fill the list.
  if (superseded?.()) return count;
  list.replaceChildren();
  list.dataset.pageCount = String(count);

  const { draw, redraw } = pageDrawer(pdfjs, list, count, onRendered);
  const observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        draw(entry.target);
      }
    },
    { rootMargin: '100% 0px' },
  );

  // Zoomed (signer.js sets --zoom on the list): the pages drawn so far are drawn again at their new width; the
  // others are drawn at it when they come into view.
  list.redraw = () => {
    for (const item of list.children) {
      // A page being drawn checks its width when it is done (in pageDrawer).
      if (item.dataset.state === 'rendered' || item.dataset.state === 'failed') redraw(item);
    }
  };
  relayoutTextOnResize(list);

  for (let index = 0; index < count; index++) {
    const page = await pdf.getPage(index + 1);
    if (superseded?.()) {
      observer.disconnect();
      return count;
    }
    const item = pageItem(page, index, count, fields, { form, onBoxChosen });
    list.append(item);
    observer.observe(item);
  }
  return count;
}

import { PDFArray, PDFDict, PDFHexString, PDFName, PDFNumber, PDFRef, PDFString, type PDFDocument, type PDFImage } from 'pdf-lib';
import { ScriptText } from '../../../platform/pdf-fonts';
import {
  checkboxAppearances,
  imageAppearance,
  radioAppearances,
  textAppearance,
  type Alignment,
  type Area,
  type TextStyle,
} from './form-appearances';
import { addAnnotation, pdfRect, type Box } from './page-boxes';

/**
 * Form fields that signers fill (ISO 32000-1 12.7): made in the preparation update, empty or with the owner's
 * prefill, read-only (values come only through the signing page); filled in the signer's own signature update,
 * which their signature's FieldMDP lock then covers (docs/signing.md, Fields signers fill).
 */

export type FormWidgetKind = 'text' | 'checkbox' | 'radio' | 'choice' | 'image';
export interface FormImage {
  bytes: Uint8Array;
  mime: 'image/png' | 'image/jpeg';
}

export interface FormFieldLayout {
  /** The field's /T (the element's field_id). */
  name: string;
  kind: FormWidgetKind;
  /** One widget per box; a radio group has one per option, in `options` order. */
  boxes: Box[];
  /** Radio: each box's option; choice: the list. */
  options?: string[];
  multiline?: boolean;
  fontSize: number;
  alignment: Alignment;
  /** /TU: what viewers and screen readers call the field. */
  label?: string;
  /** A prefilled value, drawn now (checkbox `true`/`false`, radio and choice one of the options). */
  value?: string | null;
  image?: FormImage | null;
}

export interface FormFill {
  name: string;
  /** Text and choice: the text; checkbox `true`/`false`; radio one of the options; image: what it is (its asset id). */
  value: string;
  image?: FormImage;
}

/** Field flags (table 226, 228, 230). */
const FLAG = { readOnly: 1, multiline: 1 << 12, noToggleToOff: 1 << 14, radio: 1 << 15, pushbutton: 1 << 16, combo: 1 << 17 };
const QUADDING: Record<Alignment, number> = { left: 0, center: 1, right: 2 };
const HELVETICA = 'Helv';

/** A text string: UTF-16 with its byte order mark, whatever the script (and no escaping to get wrong). */
const textString = (text: string) => PDFHexString.fromText(text);

function fieldFlags(layout: FormFieldLayout): number {
  const flags = {
    text: layout.multiline ? FLAG.multiline : 0,
    checkbox: 0,
    radio: FLAG.radio | FLAG.noToggleToOff,
    choice: FLAG.combo,
    image: FLAG.pushbutton,
  };
  return FLAG.readOnly | flags[layout.kind];
}

/** The AcroForm's default resources and appearance: Helvetica as /Helv, which every field's /DA names. */
function setDefaultResources(doc: PDFDocument, acroForm: PDFDict): void {
  if (!acroForm.lookupMaybe(PDFName.of('DR'), PDFDict)) {
    const helvetica = doc.context.register(
      doc.context.obj({ Type: 'Font', Subtype: 'Type1', BaseFont: 'Helvetica', Encoding: 'WinAnsiEncoding' }),
    );
    acroForm.set(PDFName.of('DR'), doc.context.obj({ Font: { [HELVETICA]: helvetica } }));
  }
  if (!acroForm.get(PDFName.of('DA'))) acroForm.set(PDFName.of('DA'), PDFString.of(`/${HELVETICA} 0 Tf 0 g`));
}

/** Makes every field, with its widgets and the appearance of its current value, into the form's /Fields. */
export async function addFormFields(
  doc: PDFDocument,
  acroForm: PDFDict,
  fields: PDFArray,
  layouts: FormFieldLayout[],
): Promise<void> {
  if (layouts.length === 0) return;
  setDefaultResources(doc, acroForm);
  const texts = layouts.flatMap((layout) => [layout.value ?? '', ...(layout.kind === 'radio' ? (layout.options ?? []) : [])]);
  const fonts = await ScriptText.forDocument(doc, texts, ['regular']);
  for (const layout of layouts) {
    const image = layout.image ? await embedImage(doc, layout.image) : null;
    fields.push(addFormField(doc, fonts, layout, image));
  }
  await fonts.writeFonts();
}

function addFormField(doc: PDFDocument, fonts: ScriptText, layout: FormFieldLayout, image: PDFImage | null): PDFRef {
  const context = doc.context;
  const field = context.obj({
    FT: layout.kind === 'text' ? 'Tx' : layout.kind === 'choice' ? 'Ch' : 'Btn',
    T: PDFString.of(layout.name),
    Ff: fieldFlags(layout),
    DA: PDFString.of(`/${HELVETICA} ${layout.fontSize} Tf 0 g`),
    Q: QUADDING[layout.alignment],
    Kids: [],
  });
  if (layout.label) field.set(PDFName.of('TU'), textString(layout.label));
  if (layout.options && (layout.kind === 'choice' || layout.kind === 'radio'))
    field.set(PDFName.of('Opt'), context.obj(layout.options.map(textString)));
  const fieldRef = context.register(field);
  const pages = doc.getPages();
  const kids = field.lookup(PDFName.of('Kids'), PDFArray);
  layout.boxes.forEach((box, index) => {
    const page = pages[box.page];
    const widget = context.obj({
      Type: 'Annot',
      Subtype: 'Widget',
      Parent: fieldRef,
      Rect: pdfRect(page, box),
      P: page.ref,
      F: 4,
    });
    const widgetRef = context.register(widget);
    kids.push(widgetRef);
    addAnnotation(page, widgetRef);
    drawWidget(doc, fonts, { field, widget, area: { width: box.width, height: box.height }, index }, layout.value ?? null, image);
  });
  if (layout.value) setValue(field, layout.kind, layout.value, layout.options);
  return fieldRef;
}

/** What a widget draws, from the field it belongs to: its kind, style and options. */
interface WidgetAt {
  field: PDFDict;
  widget: PDFDict;
  area: Area;
  /** The widget's place among the field's kids (a radio option's index). */
  index: number;
}

function drawWidget(doc: PDFDocument, fonts: ScriptText, at: WidgetAt, value: string | null, image: PDFImage | null): void {
  const { field, widget, area, index } = at;
  const kind = kindOf(field);
  const style = styleOf(field);
  if (kind === 'checkbox' || kind === 'radio') {
    const onState = kind === 'radio' ? String(index) : 'Yes';
    const options = optionsOf(field);
    const { on, off } =
      kind === 'radio' ? radioAppearances(doc, fonts, options[index] ?? '', area, style) : checkboxAppearances(doc, area);
    const chosen = kind === 'radio' ? value !== null && options.indexOf(value) === index : value === 'true';
    widget.set(PDFName.of('AP'), doc.context.obj({ N: { [onState]: on, Off: off } }));
    widget.set(PDFName.of('AS'), PDFName.of(chosen ? onState : 'Off'));
  } else if (kind === 'image') {
    widget.set(PDFName.of('AP'), doc.context.obj({ N: imageAppearance(doc, image, area) }));
  } else {
    widget.set(PDFName.of('AP'), doc.context.obj({ N: textAppearance(doc, fonts, value, area, style) }));
  }
}

function setValue(field: PDFDict, kind: FormWidgetKind, value: string, options: string[] | undefined): void {
  if (kind === 'checkbox') field.set(PDFName.of('V'), PDFName.of(value === 'true' ? 'Yes' : 'Off'));
  else if (kind === 'radio') field.set(PDFName.of('V'), PDFName.of(String(options?.indexOf(value) ?? -1)));
  else field.set(PDFName.of('V'), textString(value));
}

function kindOf(field: PDFDict): FormWidgetKind {
  const type = field.lookup(PDFName.of('FT'), PDFName).decodeText();
  const flags = field.lookupMaybe(PDFName.of('Ff'), PDFNumber)?.asNumber() ?? 0;
  if (type === 'Tx') return 'text';
  if (type === 'Ch') return 'choice';
  if (flags & FLAG.pushbutton) return 'image';
  return flags & FLAG.radio ? 'radio' : 'checkbox';
}

function styleOf(field: PDFDict): TextStyle {
  const appearance = field.lookupMaybe(PDFName.of('DA'), PDFString, PDFHexString)?.decodeText() ?? '';
  const size = Number(/([\d.]+)\s+Tf/.exec(appearance)?.[1] ?? 10);
  const quadding = field.lookupMaybe(PDFName.of('Q'), PDFNumber)?.asNumber() ?? 0;
  const flags = field.lookupMaybe(PDFName.of('Ff'), PDFNumber)?.asNumber() ?? 0;
  return {
    fontSize: size > 0 ? size : 10,
    alignment: quadding === 1 ? 'center' : quadding === 2 ? 'right' : 'left',
    multiline: (flags & FLAG.multiline) !== 0 && field.lookup(PDFName.of('FT')) === PDFName.of('Tx'),
  };
}

const optionsOf = (field: PDFDict) =>
  (field.lookupMaybe(PDFName.of('Opt'), PDFArray)?.asArray() ?? []).map((option) =>
    option instanceof PDFString || option instanceof PDFHexString ? option.decodeText() : '',
  );

const embedImage = (doc: PDFDocument, image: FormImage) =>
  image.mime === 'image/png' ? doc.embedPng(image.bytes) : doc.embedJpg(image.bytes);

/** The form's top-level fields by their /T. */
function fieldsByName(doc: PDFDocument): Map<string, PDFDict> {
  const fields = doc.catalog.lookupMaybe(PDFName.of('AcroForm'), PDFDict)?.lookupMaybe(PDFName.of('Fields'), PDFArray);
  const byName = new Map<string, PDFDict>();
  for (const ref of fields?.asArray() ?? []) {
    const field = doc.context.lookupMaybe(ref, PDFDict);
    const name = field?.lookupMaybe(PDFName.of('T'), PDFString, PDFHexString)?.decodeText();
    if (field && name !== undefined) byName.set(name, field);
  }
  return byName;
}

/** The names a signed signature field's /Lock covers ('all' for /Action /All). */
export function lockedNames(signatureField: PDFDict): Set<string> | 'all' | null {
  const lock = signatureField.lookupMaybe(PDFName.of('Lock'), PDFDict);
  if (!lock) return null;
  if (lock.lookupMaybe(PDFName.of('Action'), PDFName)?.decodeText() === 'All') return 'all';
  const names = lock.lookupMaybe(PDFName.of('Fields'), PDFArray)?.asArray() ?? [];
  return new Set(names.map((name) => (name instanceof PDFString || name instanceof PDFHexString ? name.decodeText() : '')));
}

/**
 * Writes the signer's values into their fields (in the signature's own update, before its byte range): /V and a new
 * appearance for each widget. A field that is missing, or that a signature already made locks, is never filled.
 */
export async function fillFormFields(doc: PDFDocument, fills: FormFill[]): Promise<void> {
  if (fills.length === 0) return;
  const fields = fieldsByName(doc);
  const locked = lockedBySignatures(fields);
  const fonts = await ScriptText.forDocument(
    doc,
    fills.map((fill) => fill.value),
    ['regular'],
  );
  for (const fill of fills) {
    const field = fields.get(fill.name);
    if (!field || field.lookup(PDFName.of('FT')) === PDFName.of('Sig')) throw new Error(`no form field ${fill.name} to fill`);
    if (locked === 'all' || locked.has(fill.name))
      throw new Error(`form field ${fill.name} is locked by a signature already made`);
    const kind = kindOf(field);
    const image = fill.image ? await embedImage(doc, fill.image) : null;
    const kids = field.lookupMaybe(PDFName.of('Kids'), PDFArray)?.asArray() ?? [];
    kids.forEach((kidRef, index) => {
      const widget = doc.context.lookup(kidRef, PDFDict);
      const rect = widget
        .lookup(PDFName.of('Rect'), PDFArray)
        .asArray()
        .map((value) => (value as PDFNumber).asNumber());
      const area = { width: Math.abs(rect[2] - rect[0]), height: Math.abs(rect[3] - rect[1]) };
      drawWidget(doc, fonts, { field, widget, area, index }, fill.value, image);
    });
    if (kind !== 'image') setValue(field, kind, fill.value, optionsOf(field));
    else field.set(PDFName.of('V'), textString(fill.value));
  }
  await fonts.writeFonts();
}

/** Every field name that signatures already in the document lock. */
function lockedBySignatures(fields: Map<string, PDFDict>): Set<string> | 'all' {
  const locked = new Set<string>();
  for (const field of fields.values()) {
    if (field.lookup(PDFName.of('FT')) !== PDFName.of('Sig') || !field.get(PDFName.of('V'))) continue;
    const names = lockedNames(field);
    if (names === 'all') return 'all';
    for (const name of names ?? []) locked.add(name);
  }
  return locked;
}

/** The lock a signer's signature field carries: FieldMDP over the fields their signature covers. */
export function fieldLock(doc: PDFDocument, names: string[]): PDFDict {
  return doc.context.obj({ Type: 'SigFieldLock', Action: 'Include', Fields: names.map((name) => PDFString.of(name)) });
}

/** The signature dictionary's /Reference for a field with a lock (FieldMDP, ISO 32000-1 12.8.2.4), as raw PDF. */
export function fieldMdpReference(field: PDFDict, catalogRef: PDFRef | undefined): string | null {
  const names = lockedNames(field);
  if (!names || names === 'all') return null;
  const list = [...names].map((name) => PDFString.of(name).toString()).join(' ');
  const data = catalogRef ? ` /Data ${catalogRef.toString()}` : '';
  return `/Reference [<< /Type /SigRef /TransformMethod /FieldMDP /TransformParams << /Type /TransformParams /Action /Include /Fields [${list}] /V /1.2 >>${data} >>]`;
}

import type { ElementKind } from './element-kind';
import { checkbox } from './checkbox';
import { date } from './date';
import { dateSigned } from './date-signed';
import { dropdown } from './dropdown';
import { email } from './email';
import { image } from './image';
import { initials } from './initials';
import { name } from './name';
import { numberKind } from './number';
import { radio } from './radio';
import { seal } from './seal';
import { signature } from './signature';
import { textKind } from './text';

/** Every kind of element, by its `type`: the one list planning, templates, preparation and the signer's views ask. */
const KINDS: readonly ElementKind[] = [
  signature,
  image,
  initials,
  textKind,
  numberKind,
  date,
  checkbox,
  radio,
  dropdown,
  name,
  email,
  dateSigned,
  seal,
];

export const ELEMENT_TYPES: readonly string[] = KINDS.map((kind) => kind.type);
const BY_TYPE = new Map(KINDS.map((kind) => [kind.type, kind] as const));

/** The kind of a stored element (its type was checked when it was planned). */
export function kindOf(element: { type: string }): ElementKind {
  const kind = BY_TYPE.get(element.type);
  if (!kind) throw new Error(`no element kind ${element.type}`);
  return kind;
}

export const isKnownType = (type: string) => BY_TYPE.has(type);

/**
 * Reading a PDF's structure where its cross-reference sections place it: the sections themselves (a table, a stream,
 * a hybrid file's both), and a pdf-lib document whose objects are read only when looked up.
 */
export { crossReferenceSection, sectionAt, type Section, type SectionEntry } from './cross-reference-section';
export {
  CrossReferenceMismatch,
  documentThroughSections,
  lastStartxref,
  lazyDocument,
  pageCountThroughSections,
  type Fill,
} from './lazy-document';

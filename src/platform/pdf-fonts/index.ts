export { printable, ScriptText, type TextRun, type Weight } from './script-text';

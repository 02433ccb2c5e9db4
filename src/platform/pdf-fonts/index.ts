export { fontsDir, printable, ScriptText, type TextRun, type Weight } from './script-text';

/**
 * The layout's rules (docs/development.md): entries -> modules -> platform, never back; no cycle; a module is
 * used through its public surface only (`src/modules/<name>/index.ts`); a module uses only the modules the
 * module map below allows. `npm run lint` checks them, and the test command runs it: any violation fails.
 */

/**
 * The module map (`src/module-map.json`): which module may use which, the one list of the allowed arrows between
 * modules. An import the list lacks fails the lint. `npm run docs:map` writes the list into docs/development.md;
 * test/platform/module-map.test.ts fails when the docs differ from it, when a folder of src/modules is missing from
 * it, or when it allows an arrow no code uses.
 */
const moduleMap = require('./src/module-map.json');

/** One rule per module: it may import its own files and the modules the map lists, no other module. */
const moduleMapRules = Object.entries(moduleMap).map(([module, uses]) => ({
  name: `module-map/${module}`,
  severity: 'error',
  comment: `The module map (docs/development.md): ${module} uses ${uses.length ? uses.join(', ') : 'no other module'}.`,
  from: { path: `^src/modules/${module}/` },
  to: { path: '^src/modules/', pathNot: [`^src/modules/(${[module, ...uses].join('|')})/`] },
}));

/** The part of src/platform above the mechanisms: the composition, the HTTP faces and the assembly. */
const PLATFORM_ABOVE_MECHANISMS = '^src/platform/(services\\.ts$|module\\.ts$|bootstrap\\.ts$|rest/|http/)';

module.exports = {
  forbidden: [
    ...moduleMapRules,
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes two files one: neither can be read, tested or moved alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'platform-knows-no-module',
      severity: 'error',
      comment: 'src/platform holds mechanisms that know no domain; they take what they serve as parameters.',
      from: { path: '^src/platform/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'module-public-surface',
      severity: 'error',
      comment:
        "Another module is used through its index.ts only; everything else is that module's own business. The one " +
        "named exception is esign's surface for the signer's side (next rule).",
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/([^/]+)/',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$', '^src/modules/esign/signer-side\\.ts$'],
      },
    },
    {
      name: 'esign-signer-side',
      severity: 'error',
      comment:
        "esign/signer-side.ts is what signer-journey needs of esign (the signer's turn, recording what a signer " +
        'does); only signer-journey uses it, and signer-journey uses nothing else of esign.',
      from: { path: '^src/', pathNot: '^src/modules/(esign|signer-journey)/' },
      to: { path: '^src/modules/esign/signer-side\\.ts$' },
    },
    {
      name: 'signer-journey-uses-esign-signer-side',
      severity: 'error',
      comment: 'signer-journey takes what it needs of esign from esign/signer-side.ts, not from its index.ts.',
      from: { path: '^src/modules/signer-journey/' },
      to: { path: '^src/modules/esign/', pathNot: '^src/modules/esign/signer-side\\.ts$' },
    },
    {
      name: 'production-never-imports-sandbox',
      severity: 'error',
      comment:
        "The sandbox's stand-ins (src/modules/sandbox) are handed in by the entries' composition: no module and no " +
        'platform code imports them, so the production path runs without them (signing and stamps declare slots).',
      from: { path: '^src/', pathNot: ['^src/[^/]+\\.ts$', '^src/cli/', '^src/modules/sandbox/'] },
      to: { path: '^src/modules/sandbox/' },
    },
    {
      name: 'entries-use-public-surfaces',
      severity: 'error',
      comment:
        'Entries compose modules through their index.ts. The worker-thread entry is the exception: it loads only ' +
        'the pure functions it runs, not a whole module (resolvers, entities) in every thread.',
      from: { path: '^src/([^/]+\\.ts|cli/)', pathNot: '^src/untrusted-bytes\\.worker\\.ts$' },
      to: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/[^/]+/index\\.ts$' },
    },
    {
      name: 'platform-mechanisms-below-services',
      severity: 'error',
      comment:
        'Inside src/platform, the mechanisms (auth, db, graphql, jobs, storage, ... and the leaf files) sit below ' +
        'services.ts, the composition of them, and below the HTTP faces (rest/, http/) and the assembly (module.ts, ' +
        'bootstrap.ts): they declare what they use (a narrow interface or parameter) and never import those, not ' +
        'even a type.',
      from: { path: '^src/platform/', pathNot: PLATFORM_ABOVE_MECHANISMS },
      to: { path: PLATFORM_ABOVE_MECHANISMS },
    },
    {
      name: 'platform-services-compose-mechanisms',
      severity: 'error',
      comment: 'services.ts composes the mechanisms only: the faces and the assembly above it take it as a parameter.',
      from: { path: '^src/platform/services\\.ts$' },
      to: { path: PLATFORM_ABOVE_MECHANISMS },
    },
    {
      name: 'platform-rest-below-http',
      severity: 'error',
      comment: 'http/ mounts the faces (REST among them) on the server: the REST face never imports it.',
      from: { path: '^src/platform/rest/' },
      to: { path: '^src/platform/(http/|module\\.ts$|bootstrap\\.ts$)' },
    },
    {
      name: 'config-is-a-leaf',
      severity: 'error',
      comment:
        'The configuration is read first and by everyone: src/config/ imports nothing of src/ outside itself ' +
        '(npm packages and Node only).',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/config/' },
    },
    {
      name: 'product-without-tests',
      severity: 'error',
      comment: 'The service never loads test or benchmark code.',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|dist-bench|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};

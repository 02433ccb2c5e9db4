/**
 * The layout's rules (docs/development.md): entries -> modules -> platform, never back; no cycle; a module is
 * used through its public surface only (`src/modules/<name>/index.ts`). `npm run lint` checks them; the
 * violations that predate the rules are listed in .dependency-cruiser-known-violations.json and only new ones
 * fail (issue 17 removes the known ones).
 */
module.exports = {
  forbidden: [
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
      comment: "Another module is used through its index.ts only; everything else is that module's own business.",
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'config-is-a-leaf',
      severity: 'error',
      comment: 'The configuration is read first and by everyone: it imports no other file of src/.',
      from: { path: '^src/config\\.ts$' },
      to: { path: '^src/' },
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
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};

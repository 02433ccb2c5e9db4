# Source this file (`. scripts/use-node.sh`): it puts the Node.js this project runs on first on PATH.
#
# Why Node 24: Node 20 reached its end of life in April 2026 (no more security fixes), and the GraphQL
# toolchain we depend on (@whatwg-node/* under sofa-api, listr2 and sync-fetch under graphql-codegen)
# now requires Node >= 22.15; Node 24 is the LTS line. `package.json` says so in `engines`, and `.npmrc`
# makes npm refuse other versions instead of printing engine warnings.
#
# A node on PATH that is already 24 or newer is used as it is. Otherwise the official Node binary is
# installed once from the npm registry (the `node-linux-<arch>` package that the `node` package itself
# wraps), under ${ESIGN_NODE_HOME:-$HOME/.cache/esign-node}, and put first on PATH. Nothing else is touched.
# The npm on PATH keeps working: it runs on whichever node comes first.

esign_node_major=24

esign_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" -ge "$esign_node_major" ] 2>/dev/null
}

if ! esign_node_ok; then
  case "$(uname -m)" in
    x86_64 | amd64) esign_node_arch=x64 ;;
    aarch64 | arm64) esign_node_arch=arm64 ;;
    *) esign_node_arch="$(uname -m)" ;;
  esac
  esign_node_home="${ESIGN_NODE_HOME:-$HOME/.cache/esign-node}/$esign_node_major"
  esign_node_bin="$esign_node_home/node_modules/node-linux-$esign_node_arch/bin"
  if [ ! -x "$esign_node_bin/node" ]; then
    echo "installing Node $esign_node_major (node-linux-$esign_node_arch from the npm registry) under $esign_node_home" >&2
    mkdir -p "$esign_node_home"
    npm install --silent --no-save --no-package-lock --no-audit --no-fund --prefix "$esign_node_home" \
      "node-linux-$esign_node_arch@$esign_node_major" >&2
  fi
  export PATH="$esign_node_bin:$PATH"
  hash -r 2>/dev/null
fi

if esign_node_ok; then
  echo "using node $(node --version) ($(command -v node))" >&2
else
  echo "could not put Node $esign_node_major on PATH; install it and try again" >&2
fi
unset -f esign_node_ok
unset esign_node_major esign_node_arch esign_node_home esign_node_bin

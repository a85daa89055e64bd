// Starts the ACP bridge from the bundle $BENCH_ACP_BUNDLE, as bin/raider starts
// it from dist/acp-raider/acp-raider.bundle.cjs: for bench/acp-bridge-phases.ts
// to try another build of the bridge side by side with the one in dist/.
'use strict';
require(process.env.BENCH_ACP_BUNDLE)
  .runAcpRaider(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  });

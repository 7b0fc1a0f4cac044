// Shared by the node capture scripts: run dump.py against the capture server.
const { execFileSync } = require("child_process");
const path = require("path");

module.exports = function dump(library, version) {
  execFileSync(process.env.PY, [process.env.DUMP_PY, process.env.REDIS_PORT, library, version,
    path.join(process.env.OUT_DIR, library)], { stdio: "inherit" });
};

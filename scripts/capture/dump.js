// Shared by the node capture scripts: run dump.py against the capture server.
const { execFileSync } = require("child_process");
const path = require("path");

module.exports = function dump(library, version) {
  execFileSync(process.env.PY, [process.env.DUMP_PY, process.env.REDIS_PORT, library, version,
    path.join(process.env.OUT_DIR, library)], { stdio: "inherit" });
};

// version returns an installed package's version, even when its exports hide package.json.
module.exports.version = function version(pkg) {
  const fs = require("fs");
  return JSON.parse(fs.readFileSync(path.join(process.env.NODE_PATH, pkg, "package.json"), "utf8")).version;
};

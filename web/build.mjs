// Bundle the parts of three.js that ahbm's viewer uses (three-entry.js) into one
// minified classic script defining the global THREE, with three.js's MIT licence
// at its top, and copy the licence beside it. Run: npm ci && npm run build
import { build } from "esbuild";
import { readFileSync, writeFileSync } from "node:fs";

const out = "../ahbm/graphics/_web/";
const pkg = JSON.parse(readFileSync("node_modules/three/package.json", "utf8"));
const license = readFileSync("node_modules/three/LICENSE", "utf8").trim();
await build({
  entryPoints: ["three-entry.js"],
  bundle: true,
  minify: true,
  format: "iife",
  globalName: "THREE",
  target: "es2020",
  legalComments: "none",
  banner: { js: `/*! three.js ${pkg.version} with OrbitControls, bundled for ahbm by web/build.mjs\n${license}\n*/` },
  outfile: out + "three.min.js",
});
writeFileSync(out + "three.LICENSE", license + "\n");
console.log(`three ${pkg.version} -> ${out}three.min.js`);

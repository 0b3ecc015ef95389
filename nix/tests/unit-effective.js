// node unit-effective.js UNIT [DROPIN...] -> JSON { Section: { Key: [values] } }
//
// What systemd ends up with after reading a unit file and then its drop-ins
// in order: every assignment of a key appends, and an empty assignment
// ("ExecStart=") clears what came before. For single-valued keys the last
// element is the effective value. This is how the checks see the unit NixOS
// runs: the package's file plus the module's overrides.conf.
'use strict';
const fs = require('fs');

const effective = {};
for (const file of process.argv.slice(2)) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  let section = null;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].trim();
    while (line.endsWith('\\') && i + 1 < lines.length) {
      line = line.slice(0, -1) + ' ' + lines[++i].trim();
    }
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = line.match(/^\[(.+)\]$/);
    if (header) {
      section = header[1];
      effective[section] = effective[section] || {};
      continue;
    }
    const eq = line.indexOf('=');
    if (section === null || eq < 0) {
      console.error(`${file}:${i + 1}: not an assignment inside a section: ${line}`);
      process.exit(2);
    }
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    const prior = effective[section][key] || [];
    effective[section][key] = value === '' ? [] : prior.concat([value]);
  }
}
console.log(JSON.stringify(effective));

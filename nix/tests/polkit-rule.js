// node polkit-rule.js RULES_FILE
//
// Runs the module's polkit rule text in a fresh JavaScript context with a
// fake `polkit` object (as polkitd does, minus polkitd) and asks it about
// every combination of action, group and machine below. Exactly one kind of
// request may be granted: org.freedesktop.machine1.shell, by a member of
// hive-admin, on a machine named h-<agent>. Everything else must be left
// unhandled (undefined), so the rule never answers "no" for other rules.
// Prints one "ok"/"FAIL" line per case; exits 1 on any FAIL.
'use strict';
const fs = require('fs');
const vm = require('vm');

const rulesFile = process.argv[2];
const rules = [];
const Result = { NO: 'no', YES: 'yes', AUTH_SELF: 'auth_self', AUTH_SELF_KEEP: 'auth_self_keep',
  AUTH_ADMIN: 'auth_admin', AUTH_ADMIN_KEEP: 'auth_admin_keep', NOT_HANDLED: null };
const polkit = {
  Result,
  addRule: (f) => rules.push(f),
  addAdminRule: () => {},
  log: () => {},
  spawn: () => { throw new Error('rule must not spawn programs'); },
};
vm.runInNewContext(fs.readFileSync(rulesFile, 'utf8'), { polkit }, { filename: rulesFile, timeout: 1000 });

function decide(actionId, groups, details) {
  const action = { id: actionId, lookup: (k) => details[k] };
  const subject = { user: 'someone', local: true, active: true, pid: 4242, session: 'c1',
    isInGroup: (g) => groups.includes(g), isInNetGroup: () => false };
  for (const rule of rules) {
    const r = rule(action, subject);
    if (r !== undefined && r !== null) return r;
  }
  return undefined;
}

const actions = ['org.freedesktop.machine1.shell', 'org.freedesktop.machine1.host-shell',
  'org.freedesktop.machine1.login', 'org.freedesktop.machine1.manage-machines',
  'org.freedesktop.machine1.manage-images', 'org.freedesktop.systemd1.manage-units'];
const groupSets = [['hive-admin'], ['users', 'hive-admin'], ['users'], ['wheel'], [], ['hive-admins'], ['hive']];
const machines = ['h-alice', 'h-ruth', 'h-a-b-9', 'h-' + 'x'.repeat(63), undefined, '.host', 'alice',
  'h-', 'H-alice', 'h-Alice', 'h-alice.example', 'h-alice/..', 'xh-alice', 'h-alice\n', 'h-' + 'x'.repeat(64),
  'h-ali ce'];

let failures = 0;
let granted = 0;
let cases = 0;
for (const a of actions) for (const g of groupSets) for (const m of machines) {
  const details = m === undefined ? { verb: 'shell' } : { machine: m, verb: 'shell', user: 'root' };
  const expectYes = a === 'org.freedesktop.machine1.shell' && g.includes('hive-admin') &&
    m !== undefined && /^h-[a-z0-9-]{1,63}$/.test(m) && !m.includes('\n');
  const got = decide(a, g, details);
  const ok = expectYes ? got === 'yes' : got === undefined;
  cases++;
  if (got === 'yes') granted++;
  if (!ok) {
    failures++;
    console.log(`FAIL - ${a} by [${g}] on ${JSON.stringify(m)}: got ${got}, want ${expectYes ? 'yes' : 'unhandled'}`);
  }
}
if (rules.length !== 1) { failures++; console.log(`FAIL - expected exactly one rule, got ${rules.length}`); }
if (failures === 0) console.log(`ok   - polkit rule: ${granted} of ${cases} requests granted, all machine1.shell by hive-admin on h-<agent>; the rest unhandled`);
process.exit(failures === 0 ? 0 : 1);

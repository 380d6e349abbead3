// The ACL rules without a server (domain/posix-acl.ts, dfs/acl.ts): the access check's order and
// mask, the sticky bit, set/modify/remove of an ACL, and what a new path inherits. The system
// tests (tests/system/datalake/acl*.test.ts) prove them through the SDKs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { permits, stickyAllows, type AccessControl } from '../../src/domain/posix-acl.js';
import { aclText, applyAcl, inheritedAccess } from '../../src/dfs/acl.js';

const path = (mode: string, acl = '', owner = 'alice', group = 'staff'): AccessControl => ({ owner, group, mode, acl });

test('the owner by its bits, a named user by its entry and the mask, groups together, other without the mask', () => {
  const access = path('0640', 'user:bob:rw-,group:team:-w-,mask::r--');
  assert.equal(permits({ user: 'alice', groups: [] }, access, 6), true);
  assert.equal(permits({ user: 'alice', groups: [] }, access, 1), false);
  assert.equal(permits({ user: 'bob', groups: [] }, access, 4), true);
  assert.equal(permits({ user: 'bob', groups: [] }, access, 2), false, 'masked');
  assert.equal(permits({ user: 'carol', groups: ['staff', 'team'] }, access, 4), true);
  assert.equal(permits({ user: 'carol', groups: ['team'] }, access, 2), false, 'masked');
  assert.equal(permits({ user: 'dave', groups: [] }, path('0604'), 4), true);
  assert.equal(permits({ user: 'bob', groups: [] }, path('0604', 'user:bob:---'), 4), false, 'a named entry wins');
});

test('the sticky bit: the child’s owner or the directory’s', () => {
  const sticky = path('1777', '', 'alice');
  assert.equal(stickyAllows({ user: 'bob', groups: [] }, sticky, path('0666', '', 'carol')), false);
  assert.equal(stickyAllows({ user: 'carol', groups: [] }, sticky, path('0666', '', 'carol')), true);
  assert.equal(stickyAllows({ user: 'alice', groups: [] }, sticky, path('0666', '', 'carol')), true);
  assert.equal(stickyAllows({ user: 'bob', groups: [] }, path('0777'), path('0666', '', 'carol')), true);
});

test('set, modify and remove; files drop default entries', () => {
  const start = path('0750', 'user:bob:r-x');
  assert.equal(
    aclText(applyAcl(start, 'user::rw-,group:team:r--', 'set', true)),
    'user::rw-,group::r-x,group:team:r--,other::---',
  );
  assert.equal(
    aclText(applyAcl(start, 'user:bob:rwx,other::r--', 'modify', true)),
    'user::rwx,user:bob:rwx,group::r-x,other::r--',
  );
  assert.equal(aclText(applyAcl(start, 'user:bob', 'remove', true)), 'user::rwx,group::r-x,other::---');
  assert.equal(aclText(applyAcl(start, 'default:user:bob:r--', 'modify', false)), aclText(start));
  assert.throws(() => applyAcl(start, 'user::', 'remove', true), { code: 'InvalidHeaderValue' });
  assert.throws(() => applyAcl(start, 'user:bob:rwz', 'set', true), { code: 'InvalidHeaderValue' });
});

test('a new path: the masked mode without a default ACL, the default ACL limited by the mode with one', () => {
  assert.deepEqual(inheritedAccess(path('0750'), false, '0666', '0640', 'bob', 'staff'), path('0640', '', 'bob'));
  const parent = path(
    '0750',
    'default:user::rwx,default:group::r-x,default:other::r-x,default:user:carol:rwx,default:mask::rwx',
  );
  const file = inheritedAccess(parent, false, '0666', '0640', 'bob', 'staff');
  assert.equal(aclText(file), 'user::rw-,user:carol:rwx,group::r-x,mask::rw-,other::r--');
  const directory = inheritedAccess(parent, true, '1777', '1750', 'bob', 'staff');
  assert.equal(directory.mode, '1755');
  assert.ok(
    aclText(directory).endsWith(
      'default:user::rwx,default:user:carol:rwx,default:group::r-x,default:mask::rwx,default:other::r-x',
    ),
  );
});

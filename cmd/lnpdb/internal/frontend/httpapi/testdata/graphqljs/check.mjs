// check.mjs URL KEY SCHEMA_FILE: graphql-js, as client tools use it, against
// lnpdb's /graphql. Introspection with every option of getIntrospectionQuery,
// buildClientSchema, the schema it builds compared with schema.graphql, then
// validation and execution of the documented operations. Exits non-zero with
// a message on the first failure.
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import {
  buildClientSchema, buildSchema, getIntrospectionQuery, lexicographicSortSchema,
  parse, printSchema, validate, version,
} from 'graphql';

const [url, key, schemaFile] = process.argv.slice(2);

async function post(query, variables) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
  assert.equal(res.status, 200, `HTTP ${res.status}`);
  return res.json();
}

// Every option of the spec; experimentalDirectiveDeprecation asks for
// __Directive.isDeprecated, a proposal not in the spec, and is left off.
const options = {
  descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true,
  inputValueDeprecation: true, oneOf: true,
};
const intro = await post(getIntrospectionQuery(options));
assert.equal(intro.errors, undefined, JSON.stringify(intro.errors));
const schema = buildClientSchema(intro.data);
assert.match(schema.description ?? '', /docs\/CONTRACT\.md/, 'the schema description');
for (const d of intro.data.__schema.directives) {
  assert.equal(typeof d.isRepeatable, 'boolean', `@${d.name} isRepeatable`);
}
// The server does not deliver incrementally, and does not declare @defer.
assert.equal(schema.getDirective('defer'), undefined, '@defer is not advertised');
const declared = schema;
const sdl = buildSchema(readFileSync(schemaFile, 'utf8'));
assert.equal(printSchema(lexicographicSortSchema(declared)), printSchema(lexicographicSortSchema(sdl)),
  'introspection describes schema.graphql');

const operations = {
  lookupLrnSimple: ['{ lookupLrn(phoneNumber: "12025550123") { phoneNumber lrn carrier success error } }', {},
    (d) => {
      assert.equal(d.lookupLrn.success, true);
      assert.match(d.lookupLrn.lrn, /^1[0-9]{10}$/);
      assert.ok(d.lookupLrn.carrier);
    }],
  lookupLrnFull: [`query LookupLrn($number: String!, $includeEnhanced: Boolean, $includeMessaging: Boolean) {
      lookupLrn(phoneNumber: $number, includeEnhancedLrn: $includeEnhanced, includeMessaging: $includeMessaging) {
        lrn lrn_activated_at
        enhanced_lrn_data { carrier carrier_type city zip_code county timezone state rate_center lata ocn }
        messaging { provider enabled country country_code reference_id }
      } }`, { number: '12025550123', includeEnhanced: true, includeMessaging: true },
    (d) => {
      assert.match(d.lookupLrn.lrn, /^1[0-9]{10}$/);
      assert.match(d.lookupLrn.enhanced_lrn_data.timezone, /^[+-][0-9]{4}$/);
      assert.equal(typeof d.lookupLrn.messaging.enabled, 'boolean');
    }],
  lookupCnam: ['query($n: String!) { lookupCnam(phoneNumber: $n) { phoneNumber cnam success error } }', { n: '12025550123' },
    (d) => assert.equal(d.lookupCnam.phoneNumber, '12025550123')],
  lookupMessagingProvider: [`query($n: String!) { lookupMessagingProvider(phoneNumber: $n) {
      phoneNumber messagingProvider messagingEnabled messagingCountry messagingCountryCode referenceId success error } }`, { n: '12025550123' },
    (d) => {
      assert.equal(d.lookupMessagingProvider.success, true);
      assert.equal(typeof d.lookupMessagingProvider.messagingEnabled, 'boolean');
    }],
  lookupTrust: [`query($n: String!) { lookupTrust(phoneNumber: $n) {
      phoneNumber trustScore trustLevel spamType complaintCount firstReported lastReported reasons success error } }`, { n: '12025550123' },
    (d) => {
      assert.equal(d.lookupTrust.success, true);
      assert.ok(d.lookupTrust.trustScore >= 0 && d.lookupTrust.trustScore <= 100);
      assert.ok(Array.isArray(d.lookupTrust.reasons));
    }],
  lookupInvalid: ['{ lookupLrn(phoneNumber: "123") { phoneNumber lrn success error } }', {},
    (d) => assert.deepEqual(d.lookupLrn, { phoneNumber: null, lrn: null, success: false, error: 'Invalid phone number format' })],
};
for (const [name, [query, variables, check]] of Object.entries(operations)) {
  const errors = validate(schema, parse(query));
  assert.deepEqual(errors, [], `${name}: graphql-js validation`);
  const res = await post(query, variables);
  assert.equal(res.errors, undefined, `${name}: ${JSON.stringify(res.errors)}`);
  check(res.data);
  console.log(`ok ${name}`);
}
// What graphql-js refuses, the server refuses too.
const bad = '{ lookupLrn(phoneNumber: "12025550123") { nope } }';
assert.notEqual(validate(schema, parse(bad)).length, 0);
assert.ok((await post(bad)).errors?.length > 0, 'the server refuses what graphql-js refuses');
console.log(`ok graphql-js ${version}`);

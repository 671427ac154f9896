#!/usr/bin/env bash
# Roles, tables, grants and access keys of the authorization tests
# (node/security.test.js; docs/security.md), for run.sh.
#   security_setup.sh setup    prints {"rw": {"id": ..., "secret": ..., "role": ...}, ...}
#   security_setup.sh cleanup  drops the tables, keys and roles again
# Needs PGHOST/PGPORT/PGDATABASE/PGUSER of a superuser and dynindex 0.2.
set -euo pipefail
P="dynindex_gw_sec"
ROLES=(rw ro other admin lk creator)
psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
api() { psql_q -c "SELECT dynindex.api('$1', '$2')" >/dev/null; }

cleanup() {
    for t in $(psql_q -c "SELECT table_name FROM dynindex.tables WHERE table_name LIKE 'GwSec%'" 2>/dev/null); do
        api DeleteTable "{\"TableName\":\"$t\"}" || true
    done
    psql_q -c "DELETE FROM dynindex.access_keys WHERE role_name LIKE '${P}_%'" >/dev/null 2>&1 || true
    for r in "${ROLES[@]}"; do
        psql_q -c "DROP OWNED BY ${P}_$r" >/dev/null 2>&1 || true
        psql_q -c "DROP ROLE IF EXISTS ${P}_$r" >/dev/null 2>&1 || true
    done
}

setup() {
    cleanup
    for r in "${ROLES[@]}"; do psql_q -c "CREATE ROLE ${P}_$r NOLOGIN" >/dev/null; done
    psql_q -c "GRANT dynindex_creator TO ${P}_creator" >/dev/null
    api CreateTable '{"TableName":"GwSecA","BillingMode":"PAY_PER_REQUEST",
      "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},
        {"AttributeName":"g","AttributeType":"S"},{"AttributeName":"l","AttributeType":"S"}],
      "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
      "LocalSecondaryIndexes":[{"IndexName":"byL","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"l","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}],
      "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}'
    api CreateTable '{"TableName":"GwSecB","BillingMode":"PAY_PER_REQUEST",
      "AttributeDefinitions":[{"AttributeName":"id","AttributeType":"N"}],"KeySchema":[{"AttributeName":"id","KeyType":"HASH"}]}'
    api CreateTable '{"TableName":"GwSecL","BillingMode":"PAY_PER_REQUEST",
      "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],
      "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
      "StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_IMAGE"},
      "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}'
    api PutItem '{"TableName":"GwSecB","Item":{"id":{"N":"1"},"secret":{"S":"b-only"}}}'
    for p in "${P}_lk" someone-else; do
        api PutItem "{\"TableName\":\"GwSecL\",\"Item\":{\"pk\":{\"S\":\"$p\"},\"sk\":{\"S\":\"1\"},\"g\":{\"S\":\"all\"}}}"
    done
    psql_q -c "SELECT dynindex.grant_table('GwSecA', '${P}_rw', 'write')" \
           -c "SELECT dynindex.grant_table('GwSecA', '${P}_ro', 'read')" \
           -c "SELECT dynindex.grant_table('GwSecB', '${P}_other', 'write')" \
           -c "SELECT dynindex.grant_table('GwSecA', '${P}_admin', 'admin')" \
           -c "SELECT dynindex.grant_table('GwSecL', '${P}_lk', 'write')" \
           -c "SELECT dynindex.grant_table('GwSecL', '${P}_lk', 'stream')" \
           -c "SELECT dynindex.restrict_leading_keys('GwSecL', '${P}_lk')" >/dev/null
    local out="{" sep=""
    for r in "${ROLES[@]}"; do
        read -r id secret < <(psql_q -F ' ' -c "SELECT * FROM dynindex.create_access_key('${P}_$r')")
        out+="$sep\"$r\":{\"id\":\"$id\",\"secret\":\"$secret\",\"role\":\"${P}_$r\"}"
        sep=","
    done
    echo "$out}"
}

case "${1:-}" in
    setup) setup ;;
    cleanup) cleanup ;;
    *) echo "usage: $0 setup|cleanup" >&2; exit 2 ;;
esac

#!/bin/sh
# One replica of the mcpyard organization service: bring the database's schema up to date, then serve.
# The container's entrypoint (deploy/Dockerfile), and what the deployment test starts for each replica.
#
#   MCPYARD_ORG_DATABASE  the shared database, postgresql://USER:PASSWORD@HOST:PORT/DB (required)
#   MCPYARD_ORG_KEY       the sealing key(s), base64, shared by every replica (required; NEW,OLD while rotating)
#   MCPYARD_HOST          the address to listen on (default 0.0.0.0)
#   MCPYARD_PORT          the port to listen on (default 8760)
#   MCPYARD_ORG_DEV       1: development only, registered servers may be plain http on this machine
#   MCPYARD_DRAIN_SECONDS how long a replica told to stop goes on serving while /readyz says it is stopping
#                         (default 3: deploy/haproxy.cfg takes it out within 1.5 s)
#
# Replicas migrating at once migrate once; the others wait for it. On SIGTERM the replica first answers
# /readyz with 503 while it still serves what it is sent, so the load balancer takes it out; then it stops
# listening, and stops once its requests in flight end (at most 30 s).
set -eu
: "${MCPYARD_ORG_DATABASE:?set MCPYARD_ORG_DATABASE to the shared database}"
: "${MCPYARD_ORG_KEY:?set MCPYARD_ORG_KEY to the sealing key every replica shares}"
MCPYARD="${MCPYARD:-mcpyard}"
$MCPYARD org migrate
DRAIN="${MCPYARD_DRAIN_SECONDS:-3}"
if [ "${MCPYARD_ORG_DEV:-0}" = "1" ]; then
  exec $MCPYARD org serve --host "${MCPYARD_HOST:-0.0.0.0}" --port "${MCPYARD_PORT:-8760}" --drain "$DRAIN" --dev
fi
exec $MCPYARD org serve --host "${MCPYARD_HOST:-0.0.0.0}" --port "${MCPYARD_PORT:-8760}" --drain "$DRAIN"

"""The organization service (`mcpyard org`): registered servers, policies bound to definition hashes, approvals.

Heavy to import (a database layer and a web stack): only `mcpyard org` commands import it.
"""

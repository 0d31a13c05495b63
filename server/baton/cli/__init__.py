"""The command line: the parser and one module per group of subcommands, their reports, the demo.

May import: core, the contract, and the LSP layer only to start the server."""

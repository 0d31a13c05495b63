"""The Agent Client Protocol front end (`baton acp`): Zed, JetBrains, Emacs and Neovim agent
panels talk to Baton over ACP on stdio.

Like lsp/, it sits over core's service (the same data dir and sessions as `baton serve`)
and may import core and the contract's names; core never imports it.
"""

-- pallas-ls server config in the format Neovim 0.11+ and nvim-lspconfig use (lsp/<name>.lua).
-- Put this folder's parent on 'runtimepath' (or copy this file to ~/.config/nvim/lsp/),
-- then call `vim.lsp.enable('pallas_ls')`.
---@type vim.lsp.Config
return {
  cmd = { 'pallas-ls', 'serve' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', '.git' },
  settings = {},
}

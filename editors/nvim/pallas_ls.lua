-- pallas-ls for Neovim 0.11+ (no plugin needed): add these lines to init.lua,
-- or `:source /path/to/editors/nvim/pallas_ls.lua`.
-- Needs `pallas-ls` on PATH (pip install /path/to/pallas-ls), or set cmd to
-- { '/path/to/python', '-m', 'pallas_ls', 'serve' }.
vim.lsp.config('pallas_ls', {
  cmd = { 'pallas-ls', 'serve' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', '.git' },
  settings = {},
})
vim.lsp.enable('pallas_ls')

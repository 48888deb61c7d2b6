;;; pallas-ls.el --- Use pallas-ls (JAX Pallas TPU checks) with eglot  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: languages, tools

;;; Commentary:

;; Registers the pallas-ls language server with eglot for `python-mode' and
;; `python-ts-mode'.  Put this file's folder on `load-path', then:
;;
;;   (require 'pallas-ls)
;;   (add-hook 'python-mode-hook #'eglot-ensure)
;;
;; `pallas-ls' must be on PATH (pip install /path/to/pallas-ls), or set
;; `pallas-ls-command'.  Eglot runs one server per buffer: for Python buffers this
;; entry takes the place of eglot's default (pylsp, pyright...).

;;; Code:

(defgroup pallas-ls nil
  "The pallas-ls language server for JAX Pallas TPU kernels."
  :group 'tools
  :prefix "pallas-ls-")

(defcustom pallas-ls-command '("pallas-ls" "serve")
  "Program and arguments that start the pallas-ls server on stdio.
For example (\"/path/to/venv/bin/python\" \"-m\" \"pallas_ls\" \"serve\")."
  :type '(repeat string)
  :group 'pallas-ls)

(defun pallas-ls-server-contact (&optional _interactive)
  "The eglot contact for pallas-ls: the current value of `pallas-ls-command'."
  pallas-ls-command)

(defvar eglot-server-programs)

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '(((python-mode :language-id "python")
                  (python-ts-mode :language-id "python"))
                 . pallas-ls-server-contact)))

(provide 'pallas-ls)
;;; pallas-ls.el ends here

;;; emacs_driver.el --- Emacs 28 + eglot 1.9 end-to-end driver for pallas-ls  -*- lexical-binding: t -*-
;; Started by tests/editors/test_emacs.py:  emacs -Q --batch -l tests/editors/emacs_driver.el
;; Env: PALLAS_EXPECT (JSON written by the test), PALLAS_RESULT (PASS/FAIL lines go there).
;; It loads the shipped editors/emacs/pallas-ls.el the way a user does (load-path + require).
(require 'package)
;; -Q skips Debian's site-start, which is what puts the elpa-* packages (eglot) in reach
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(require 'json)
(require 'cl-lib)
(require 'subr-x)

(defvar pallas-expect
  (let ((json-object-type 'alist) (json-array-type 'list) (json-key-type 'string))
    (json-read-file (getenv "PALLAS_EXPECT"))))
(defun expect! (&rest keys)
  (let ((v pallas-expect))
    (dolist (k keys v) (setq v (cdr (assoc k v))))))

(defvar pallas-out nil)
(defun log! (fmt &rest args) (push (apply #'format fmt args) pallas-out))
(defun check! (ok id &optional detail)
  (log! "%s %s%s" (if ok "PASS" "FAIL") id
        (if detail (concat " " (replace-regexp-in-string "\n" "\\\\n" detail)) ""))
  (unless ok (error "check failed: %s %s" id (or detail ""))))
(defun wait-until (pred secs)
  "Pump process output until PRED is non-nil or SECS elapse (idle timers never fire in batch)."
  (let ((deadline (+ (float-time) secs)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall pred)))

;; What the user's init file holds (README): the shipped file, found on load-path.
(add-to-list 'load-path (expand-file-name "editors/emacs" (expect! "repo")))
(require 'pallas-ls)
(add-hook 'python-mode-hook #'eglot-ensure)

(require 'eglot)
(require 'flymake)
(setq eglot-sync-connect t)
(when (expect! "ignored")     ; the README's settings form
  (setq-default eglot-workspace-configuration
                `(:pallas-ls (:ignore ,(vconcat (expect! "ignored"))))))

;; The raw diagnostics the server published, per URI: flymake keeps buffer positions
;; only, and the point is to check the server's UTF-16 columns.
(defvar pallas-raw (make-hash-table :test #'equal))
(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql textDocument/publishDiagnostics)) &key uri diagnostics &allow-other-keys)
  (puthash uri (append diagnostics nil) pallas-raw))

(defun pallas-range-list (range)
  (let ((s (plist-get range :start)) (e (plist-get range :end)))
    (list (plist-get s :line) (plist-get s :character) (plist-get e :line) (plist-get e :character))))

(defun pallas-check-diagnostic (uri tag)
  (let* ((shown (flymake-diagnostics))
         (raw (gethash uri pallas-raw)))
    (check! (= (length shown) 1) (concat tag ".count") (format "shown=%d" (length shown)))
    (check! (= (length raw) 1) (concat tag ".raw_count") (format "raw=%d" (length raw)))
    (let* ((d (car shown)) (r (car raw))
           (msg (plist-get r :message))
           (beg (flymake-diagnostic-beg d)) (end (flymake-diagnostic-end d))
           (want (expect! "range" "utf-16"))
           (got (pallas-range-list (plist-get r :range))))
      (check! (string-prefix-p (expect! "message_prefix") msg) (concat tag ".message") (format "%S" msg))
      (check! (string-match-p (regexp-quote msg) (flymake-diagnostic-text d)) (concat tag ".shown_message")
              (format "%S" (flymake-diagnostic-text d)))
      (check! (and (equal (plist-get r :code) (expect! "code"))
                   (string-match-p (regexp-quote (format "[%s]" (expect! "code"))) (flymake-diagnostic-text d)))
              (concat tag ".code") (format "%S" (plist-get r :code)))
      (check! (equal got want) (concat tag ".range.lsp") (format "utf-16 got %S want %S" got want))
      ;; buffer positions, in characters (= code points), against the code-point range
      (let ((shown-range (save-excursion
                           (list (progn (goto-char beg) (1- (line-number-at-pos)))
                                 (- beg (line-beginning-position))
                                 (progn (goto-char end) (1- (line-number-at-pos)))
                                 (- end (line-beginning-position))))))
        (check! (equal shown-range (expect! "range" "utf-32")) (concat tag ".range.buffer")
                (format "got %S want %S" shown-range (expect! "range" "utf-32"))))
      (check! (equal (buffer-substring-no-properties beg end) (expect! "covered")) (concat tag ".covers")
              (format "%S" (buffer-substring-no-properties beg end)))
      d)))

(defun pallas-run ()
  (log! "emacs %s eglot %s" emacs-version
        (or (ignore-errors (package-version-join (package-desc-version (cadr (assq 'eglot package-alist)))))
            "built-in"))
  (check! (equal (file-truename (locate-library "pallas-ls.el"))
                 (file-truename (expand-file-name "editors/emacs/pallas-ls.el" (expect! "repo"))))
          "config.loaded" (locate-library "pallas-ls.el"))
  (check! (executable-find "pallas-ls") "server.on_path" (executable-find "pallas-ls"))
  (find-file (expect! "file"))   ; displayed buffer: flymake waits for one
  (check! (eq major-mode 'python-mode) "buffer.mode" (symbol-name major-mode))
  ;; eglot-ensure (from python-mode-hook) only arms post-command-hook; in batch no
  ;; command runs, so run the hook as the first keystroke would.
  (run-hooks 'post-command-hook)
  (check! (wait-until #'eglot-current-server 30) "client.attached")
  (let* ((server (eglot-current-server))
         (uri (eglot--path-to-uri buffer-file-name))
         (command (process-command (jsonrpc--process server)))
         (encoding (plist-get (eglot--capabilities server) :positionEncoding)))
    (check! (equal command '("pallas-ls" "serve")) "client.cmd" (format "%S" command))
    (check! (equal (file-truename (project-root (eglot--project server)))
                   (file-name-as-directory (file-truename (expect! "root"))))
            "client.root_dir" (project-root (eglot--project server)))
    ;; eglot 1.9 offers no positionEncodings: the server must keep to UTF-16
    (check! (and (member encoding '(nil "utf-16")) (equal (expect! "encoding") "utf-16"))
            "client.encoding" (format "server positionEncoding %S" encoding))

    (if (expect! "ignored")
        ;; settings: the server was told to ignore the code, so it publishes an empty list
        (progn
          (check! (wait-until (lambda () (not (eq (gethash uri pallas-raw 'none) 'none))) 30)
                  "settings.report_arrived")
          (check! (and (null (gethash uri pallas-raw)) (null (flymake-diagnostics)))
                  "settings.ignored" (format "%S" (gethash uri pallas-raw))))
    ;; 1. the diagnostic: message, code, exact range
    (check! (wait-until (lambda () (flymake-diagnostics)) 30) "diag.arrived")
    (let* ((d (pallas-check-diagnostic uri "diag"))
           (beg (flymake-diagnostic-beg d)) (end (flymake-diagnostic-end d)))
      ;; 2. hover: the raw answer and what eldoc shows
      (goto-char (+ beg 2))
      (let* ((h (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams)))
             (info (and h (eglot--hover-info (plist-get h :contents)))))
        (check! (and info (string-match-p (regexp-quote (expect! "hover")) info)) "hover.text"
                (format "%S" (and info (substring info 0 (min 300 (length info)))))))
      (let (eldoc-text)
        (eglot-hover-eldoc-function (lambda (s &rest _) (setq eldoc-text s)))
        (check! (wait-until (lambda () eldoc-text) 10) "hover.eldoc")
        (check! (string-match-p (regexp-quote (expect! "hover")) eldoc-text) "hover.eldoc_text"))

      ;; 3. quick fix: exactly one quickfix for the finding, then M-x eglot-code-actions
      (let* ((actions (eglot-code-actions beg end "quickfix"))
             (fixes (cl-remove-if-not
                     (lambda (a) (string-match-p "opt_level" (plist-get a :title))) actions))
             (title (plist-get (car fixes) :title))
             (offered nil))
        (dolist (a actions) (log! "quickfix offered: %s" (plist-get a :title)))
        (check! (= (length fixes) 1) "action.count"
                (format "%d of %d quickfixes mention opt_level" (length fixes) (length actions)))
        (check! (string-match-p "remove" (downcase title)) "action.title" (format "%S" title))
        ;; the user picks the fix from the menu of every action at point
        (cl-letf (((symbol-function 'completing-read)
                   (lambda (_prompt collection &rest _)
                     (setq offered (mapcar (lambda (c) (if (consp c) (car c) c)) collection))
                     title)))
          (let ((last-nonmenu-event ?a))   ; a key, not a mouse click: no popup menu
            (eglot-code-actions beg end nil t)))
        (log! "code action menu: %s" (mapconcat #'identity offered " | "))
        (check! (equal (buffer-substring-no-properties (point-min) (point-max)) (expect! "fixed_text"))
                "fix.text" (format "%S" (save-excursion
                                         (goto-char beg)
                                         (buffer-substring-no-properties
                                          (line-beginning-position) (line-end-position))))))

      ;; 4. didChange (sent from an idle timer, which batch never runs) -> diagnostics clear
      (eglot--signal-textDocument/didChange)
      (check! (wait-until (lambda () (and (null (gethash uri pallas-raw '(x)))
                                          (null (flymake-diagnostics))))
                          15)
              "diag.cleared" (format "shown=%d" (length (flymake-diagnostics))))

      ;; 5. the user types the argument back: the diagnostic returns, at the same place
      (let ((at (expect! "retype" "utf-32")))
        (goto-char (point-min))
        (forward-line (nth 0 at))
        (forward-char (nth 1 at))
        (insert (expect! "retype_text")))
      (check! (equal (buffer-substring-no-properties (point-min) (point-max)) (expect! "text"))
              "retype.text")
      (eglot--signal-textDocument/didChange)
      (check! (wait-until (lambda () (and (gethash uri pallas-raw) (flymake-diagnostics))) 15)
              "diag.back")
      (pallas-check-diagnostic uri "diag.back")))
    (set-buffer-modified-p nil)
    (eglot-shutdown server)))

(let* ((t0 (float-time))
       (err (condition-case e (progn (pallas-run) nil) (error e))))
  (log! "elapsed_in_emacs %.2fs" (- (float-time) t0))
  (log! (if err (format "RESULT FAIL: %S" err) "RESULT PASS"))
  (let ((text (mapconcat #'identity (reverse pallas-out) "\n")))
    (with-temp-file (getenv "PALLAS_RESULT") (insert text "\n"))
    (princ (concat text "\n")))
  (kill-emacs (if err 1 0)))

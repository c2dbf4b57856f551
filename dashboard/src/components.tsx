import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks'
import { download, messageOf } from './api'

/**
 * Loads data for a page; `reload` after an action. What it returns belongs to the current `deps`: once they change (a
 * new URL, another range), the previous answer is not shown beside the new parameters while the new one loads; a
 * `reload` keeps it on screen until the fresh one arrives.
 */
export function useLoad<T> (load: () => Promise<T>, deps: unknown[]): { data: T | undefined, error: string | undefined, loading: boolean, reload: () => void } {
  const [state, setState] = useState<{ data?: T, error?: string, loading: boolean, deps?: unknown[] }>({ loading: true })
  const [generation, setGeneration] = useState(0)
  useEffect(() => {
    let current = true
    setState((previous) => ({ ...previous, loading: true }))
    load().then(
      (data) => { if (current) setState({ data, loading: false, deps }) },
      (error: unknown) => { if (current) setState({ error: messageOf(error), loading: false, deps }) }
    )
    return () => { current = false }
  }, [...deps, generation])
  const reload = useCallback(() => { setGeneration((n) => n + 1) }, [])
  if (state.deps === undefined || !sameDeps(state.deps, deps)) return { data: undefined, error: undefined, loading: true, reload }
  return { data: state.data, error: state.error, loading: state.loading, reload }
}

function sameDeps (loadedFor: unknown[], now: unknown[]): boolean {
  return loadedFor.length === now.length && loadedFor.every((value, i) => Object.is(value, now[i]))
}

export function Notice ({ kind, children }: { kind: 'error' | 'success' | 'info', children: ComponentChildren }) {
  return <p class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>{children}</p>
}

/** What a page shows while loading or after a failed load. */
export function LoadState ({ loading, error }: { loading: boolean, error: string | undefined }) {
  if (error !== undefined) return <Notice kind='error'>{error}</Notice>
  return loading ? <p role='status' class='muted'>Loading…</p> : null
}

/** Asks before doing: a modal dialog naming the action; Confirm runs it, Cancel (or Escape) does nothing. */
export function ConfirmDialog ({ open, title, children, confirmLabel, onConfirm, onCancel }: {
  open: boolean
  title: string
  children: ComponentChildren
  confirmLabel: string
  onConfirm: () => void
  onCancel: () => void
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  useEffect(() => {
    const element = dialog.current
    if (element === null) return
    if (open && !element.open) element.showModal()
    if (!open && element.open) element.close()
  }, [open])
  return (
    <dialog ref={dialog} aria-labelledby={titleId} onCancel={(event) => { event.preventDefault(); onCancel() }}>
      <h2 id={titleId}>{title}</h2>
      <div>{children}</div>
      <div class='actions'>
        <button type='button' class='primary' onClick={onConfirm}>{confirmLabel}</button>
        <button type='button' onClick={onCancel}>Cancel</button>
      </div>
    </dialog>
  )
}

/**
 * A button that confirms, then runs `action` and shows the API's answer next to it.
 * `describe` says in the dialog exactly what will happen.
 */
export function ActionButton ({ label, describe, action, onDone, danger = false, showSuccess = true }: {
  label: string
  describe: ComponentChildren
  action: () => Promise<string>
  /** Called with the answer after success (a parent that removes this button shows the answer itself). */
  onDone?: (message: string) => void
  danger?: boolean
  /** false: the parent shows the success message (errors are always shown here). */
  showSuccess?: boolean
}) {
  const [asking, setAsking] = useState(false)
  const [busy, setBusy] = useState(false)
  const [result, setResult] = useState<{ ok: boolean, message: string } | undefined>()
  const run = async (): Promise<void> => {
    setAsking(false)
    setBusy(true)
    try {
      const message = await action()
      setResult({ ok: true, message })
      onDone?.(message)
    } catch (error) {
      setResult({ ok: false, message: messageOf(error) })
    } finally {
      setBusy(false)
    }
  }
  return (
    <span class='action'>
      <button type='button' class={danger ? 'danger' : ''} disabled={busy} onClick={() => { setResult(undefined); setAsking(true) }}>{label}</button>
      <ConfirmDialog open={asking} title={`${label}?`} confirmLabel={label} onConfirm={() => { run().catch(reportError) }} onCancel={() => { setAsking(false) }}>
        {describe}
      </ConfirmDialog>
      {result !== undefined && (showSuccess || !result.ok) && <Notice kind={result.ok ? 'success' : 'error'}>{result.message}</Notice>}
    </span>
  )
}

/** A secret the API shows only once: displayed with a copy button and a warning. */
export function OneTimeSecret ({ label, secret }: { label: string, secret: string }) {
  const [copied, setCopied] = useState<string | undefined>()
  const id = useId()
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(secret)
      setCopied('Copied to the clipboard.')
    } catch {
      setCopied('Copying is not allowed here: select the text and copy it.')
    }
  }
  return (
    <div class='secret' role='region' aria-labelledby={id}>
      <p id={id}><strong>{label}</strong> — shown only this once: store it now.</p>
      <code data-testid='secret'>{secret}</code>
      <button type='button' onClick={() => { copy().catch(reportError) }}>Copy</button>
      {copied !== undefined && <span role='status'>{copied}</span>}
    </div>
  )
}

export function Field ({ label, children, hint }: { label: string, children: ComponentChildren, hint?: string }) {
  return (
    <label class='field'>
      <span>{label}</span>
      {children}
      {hint !== undefined && <small>{hint}</small>}
    </label>
  )
}

/**
 * Export CSV of the rows a list's filters select (`path` streams them). Where it is used it is keyed by the URL's
 * query: its notice speaks of one selection, and another search, filter or Back renders without it.
 */
export function ExportCsv ({ path, query, fallbackName, rows }: {
  path: string
  query: Record<string, string | undefined>
  fallbackName: string
  /** What a row is, for the notice: "every payment these filters select". */
  rows: string
}) {
  const [exported, setExported] = useState<{ ok: boolean, text: string } | undefined>()
  const [exporting, setExporting] = useState(false)
  const exportCsv = async (): Promise<void> => {
    setExporting(true)
    setExported(undefined)
    try {
      const name = await download(path, query, fallbackName)
      setExported({ ok: true, text: `Exported ${name}: every ${rows} these filters select, not only this page.` })
    } catch (error) {
      setExported({ ok: false, text: messageOf(error) })
    } finally {
      setExporting(false)
    }
  }
  return (
    <div class='action-row'>
      <button type='button' onClick={() => { exportCsv().catch(reportError) }} disabled={exporting}>Export CSV</button>
      {exported !== undefined && <Notice kind={exported.ok ? 'success' : 'error'}>{exported.text}</Notice>}
    </div>
  )
}

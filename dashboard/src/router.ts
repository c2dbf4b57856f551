import { useEffect, useState } from 'preact/hooks'

/** Hash routes (`#/payments/…?status=…`): index.html is the only document the server needs to serve. */
export interface Route { path: string[], query: URLSearchParams }

function current (): Route {
  const [path = '', query = ''] = window.location.hash.replace(/^#/, '').split('?')
  return { path: path.split('/').filter((part) => part !== '').map(decodeURIComponent), query: new URLSearchParams(query) }
}

export function useRoute (): Route {
  const [route, setRoute] = useState(current)
  useEffect(() => {
    const update = (): void => { setRoute(current()) }
    window.addEventListener('hashchange', update)
    return () => { window.removeEventListener('hashchange', update) }
  }, [])
  return route
}

export function href (path: string, query: Record<string, string | undefined> = {}): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, value)
  const search = params.toString()
  return `#${path}${search === '' ? '' : `?${search}`}`
}

export function navigate (path: string, query: Record<string, string | undefined> = {}): void {
  window.location.hash = href(path, query)
}

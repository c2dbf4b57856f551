import { useEffect, useRef } from 'preact/hooks'
import UPlot from 'uplot'

export interface ChartSeries { label: string, color: string, values: number[] }

/**
 * A uPlot line chart of values per UTC day. uPlot draws on a canvas and sizes its elements through the CSSOM
 * (element.style), which the dashboard's CSP (style-src 'self', no 'unsafe-inline') allows.
 */
export function DailyChart ({ days, series, label }: { days: string[], series: ChartSeries[], label: string }) {
  const container = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = container.current
    if (element === null) return
    const width = (): number => Math.max(320, element.clientWidth)
    const chart = new UPlot({
      width: width(),
      height: 280,
      scales: { x: { time: true } },
      axes: [{ stroke: '#1f2933' }, { stroke: '#1f2933', label }],
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, points: { show: true } }))]
    }, [days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000), ...series.map((s) => s.values)], element)
    const resize = (): void => { chart.setSize({ width: width(), height: 280 }) }
    window.addEventListener('resize', resize)
    return () => { window.removeEventListener('resize', resize); chart.destroy() }
  }, [days, series, label])
  return <div ref={container} class='chart' aria-hidden='true' />
}

/** A laid-out graph, as both layouts give it (layout.ts by elkjs, quick-layout.ts for large graphs). */
export type LaidNode = { id: string; x: number; y: number; width: number; height: number };
export type LaidEdge = { id: string; points: Array<{ x: number; y: number }> };
export type Laid = { width: number; height: number; nodes: LaidNode[]; edges: LaidEdge[] };

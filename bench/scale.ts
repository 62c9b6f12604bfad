import type { BenchContext, SectionResult } from './lib/report';
export async function runScale(_ctx: BenchContext): Promise<SectionResult> { return { figures: [], markdown: [] }; }

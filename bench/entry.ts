import type { BenchContext, SectionResult } from './lib/report';
export async function runEntry(_ctx: BenchContext): Promise<SectionResult> { return { figures: [], markdown: [] }; }

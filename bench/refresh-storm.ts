import type { BenchContext, SectionResult } from './lib/report';
export async function runRefreshStorm(_ctx: BenchContext): Promise<SectionResult> { return { figures: [], markdown: [] }; }

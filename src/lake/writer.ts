/** What writing into a lake needs, as one layer: the Parquet sink (spilling inside the lake) and the lake's checkpoints. */
import { Layer } from "effect"
import { layerCheckpoints, scratchFolder } from "./Checkpoints.js"
import { layerParquetSink } from "./ParquetSink.js"

/** The sink and checkpoints of the lake at `out`; DuckDB spills into `out/.chain-lake/tmp/`, never into the working directory. */
export const layerLakeWriter = (out: string) => Layer.mergeAll(layerParquetSink({ tempDirectory: scratchFolder(out) }), layerCheckpoints(out))

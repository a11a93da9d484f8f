/** What writing into a lake needs, as one layer: the Parquet sink (spilling inside the lake) and the lake's checkpoints. */
import { Layer } from "effect"
import { layerCheckpoints, scratchFolder, type CheckpointsOptions } from "./Checkpoints.js"
import { layerParquetSink } from "./ParquetSink.js"

/** The sink and checkpoints of the lake at `out`; DuckDB spills into `out/.chain-lake/tmp/`, never into the working directory. */
export const layerLakeWriter = (out: string, options: CheckpointsOptions = {}) =>
  Layer.mergeAll(layerParquetSink({ tempDirectory: scratchFolder(out) }), layerCheckpoints(out, options))

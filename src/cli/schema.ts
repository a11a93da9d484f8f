/** `chain-lake schema`: every dataset and view with its columns (analytics/schema.ts), as text or JSON. */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { lakeSchema, type SchemaEntry } from "../analytics/schema.js"
import { UserError } from "./errors.js"
import { wrap } from "./help.js"
import { table } from "./progress.js"

/** One entry for people: its name, kind and description (wrapped to 80 columns), its key, then a table of its columns. */
const entryText = (e: SchemaEntry): string => {
  const facts =
    e.kind === "dataset" ? [`key: ${e.key.join(", ")}`, `sorted by: ${e.sortKey.join(", ")}`, `partitioned by: ${e.partition}`] : []
  // a view's columns have no descriptions of their own (its description covers them): no empty column
  const described = e.columns.some((c) => c.description !== "")
  const columns = table(e.columns.map((c) => ({ column: c.name, type: c.type, ...(described ? { description: c.description } : {}) })))
  return [...wrap(`${e.name} (${e.kind}): ${e.description}`, 80, 0), ...(facts.length ? [facts.join("; ")] : []), "", columns].join("\n")
}

export const schemaText = (entries: ReadonlyArray<SchemaEntry>): string => entries.map(entryText).join("\n\n")

export const schemaCommand = Command.make(
  "schema",
  {
    format: Options.choice("format", ["text", "json"]).pipe(
      Options.withDefault("text" as const),
      Options.withDescription(
        "text for people; json: an array of {name, kind, description, key, sortKey, partition, columns: [{name, type, description}]}"
      )
    ),
    dataset: Options.text("dataset").pipe(Options.optional, Options.withDescription("only this dataset or view"))
  },
  (o) =>
    Effect.gen(function* () {
      const entries = yield* lakeSchema(Option.getOrUndefined(o.dataset)).pipe(
        Effect.catchTags({
          // a name that is no dataset or view is a usage error; DuckDB failing to describe a view is not
          UnknownSchemaName: (e) => Effect.fail(new UserError({ message: `--dataset: ${e.message}`, exitCode: 2 })),
          AnalyticsError: (e) => Effect.fail(new UserError({ message: e.message }))
        })
      )
      yield* Console.log(o.format === "json" ? JSON.stringify(entries, null, 1) : schemaText(entries))
    })
).pipe(Command.withDescription("List every dataset and view with its columns, types and meanings (no lake or server needed)"))

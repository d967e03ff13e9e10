import type { TestProject } from "vitest/node";
import { createTemplate, startCluster } from "./postgres";

/** Starts the run's PostgreSQL cluster once and hands its admin URL to every test file. */
export default async function setup(project: TestProject): Promise<() => void> {
  const cluster = await startCluster();
  await createTemplate(cluster.adminUrl);
  project.provide("postgresAdminUrl", cluster.adminUrl);
  project.provide("postgresDataDir", cluster.dataDir);
  return () => cluster.destroy();
}

declare module "vitest" {
  export interface ProvidedContext {
    postgresAdminUrl: string;
    postgresDataDir: string;
  }
}

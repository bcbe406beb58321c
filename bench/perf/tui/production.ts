// Imported first by run.ts: React picks its build from NODE_ENV when it loads.
process.env.NODE_ENV ??= "production";

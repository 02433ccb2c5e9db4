/**
 * A row of another module's table, known by its id only. A lower module names a higher module's entity by
 * string in its relation (`@ManyToOne({ entity: 'EsignSession' })`) and types it as a RowRef: the database
 * keeps the foreign key, and the lower module never imports the higher one.
 */
export interface RowRef {
  id: string;
}

import { Migration } from '@mikro-orm/migrations';

/**
 * A stamp instance's life, kept and enforced by the database (issue 22): every insert and change of status writes a
 * stamp_instance_events row (one statement-level trigger, so a 5000-stamp order is one insert), and a move its life
 * does not allow is refused whichever code makes it. Existing instances get their creation and, if they moved, one
 * step to where they are now. Also: the vendor asks an instance took (for backoff), and one stamp per certificate
 * number.
 */
export class Migration20261124041000_StampInstanceHistory extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "stamp_instances" add column "vendor_attempts" int not null default 0;`);
    this.addSql(`create unique index "stamp_instances_certificate_number_unique" on "stamp_instances" ("certificate_number") where "certificate_number" is not null;`);
    this.addSql(`create table "stamp_instance_events" ("id" bigserial, "instance_id" varchar(64) not null, "from_status" varchar(16) null, "to_status" varchar(16) not null, "session_id" varchar(64) null, "reason" varchar(300) null, "at" timestamptz not null default clock_timestamp(), constraint "stamp_instance_events_pkey" primary key ("id"));`);
    this.addSql(`create index "stamp_instance_events_instance_id_id_index" on "stamp_instance_events" ("instance_id", "id");`);
    this.addSql(`alter table "stamp_instance_events" add constraint "stamp_instance_events_instance_id_foreign" foreign key ("instance_id") references "stamp_instances" ("id") on update cascade on delete cascade;`);

    this.addSql(`
      create function stamp_instance_move_allowed() returns trigger language plpgsql as $$
      begin
        if (old.status, new.status) in (('pending', 'available'), ('pending', 'rejected'), ('available', 'reserved'),
                                        ('reserved', 'used'), ('reserved', 'available')) then
          return new;
        end if;
        raise exception 'stamp instance % cannot go from % to %', old.id, old.status, new.status
          using errcode = 'check_violation';
      end $$;`);
    this.addSql(`
      create trigger stamp_instance_move_allowed before update of status on stamp_instances
        for each row when (old.status is distinct from new.status) execute function stamp_instance_move_allowed();`);

    // The reason of a release or use is set by the statement's caller (set_config, transaction-local); a rejection's
    // is the vendor's, on the row.
    this.addSql(`
      create function record_stamp_instance_moves() returns trigger language plpgsql as $$
      begin
        insert into stamp_instance_events (instance_id, from_status, to_status, session_id, reason)
        select n.id, o.status, n.status, coalesce(n.session_id, o.session_id),
               case when n.status = 'rejected' then n.rejected_reason
                    else nullif(current_setting('esign.stamp_move_reason', true), '') end
          from new_rows n join old_rows o on o.id = n.id
         where o.status is distinct from n.status
         order by n.serial;
        return null;
      end $$;`);
    this.addSql(`
      create trigger record_stamp_instance_moves after update on stamp_instances
        referencing old table as old_rows new table as new_rows
        for each statement execute function record_stamp_instance_moves();`);
    this.addSql(`
      create function record_stamp_instance_creations() returns trigger language plpgsql as $$
      begin
        insert into stamp_instance_events (instance_id, from_status, to_status, at)
        select n.id, null, n.status, n.created_at from new_rows n order by n.serial;
        return null;
      end $$;`);
    this.addSql(`
      create trigger record_stamp_instance_creations after insert on stamp_instances
        referencing new table as new_rows
        for each statement execute function record_stamp_instance_creations();`);

    // What is known of the instances made before: their creation, and the step to where they are.
    this.addSql(`
      insert into stamp_instance_events (instance_id, from_status, to_status, at)
      select id, null, 'pending', created_at from stamp_instances order by created_at, serial;`);
    this.addSql(`
      insert into stamp_instance_events (instance_id, from_status, to_status, session_id, reason, at)
      select id, 'pending', case when status = 'rejected' then 'rejected' else 'available' end, null, rejected_reason,
             coalesce(issued_at, created_at)
        from stamp_instances where status <> 'pending' order by created_at, serial;`);
    this.addSql(`
      insert into stamp_instance_events (instance_id, from_status, to_status, session_id, reason, at)
      select id, 'available', 'reserved', session_id, null, coalesce(issued_at, created_at)
        from stamp_instances where status in ('reserved', 'used') order by created_at, serial;`);
    this.addSql(`
      insert into stamp_instance_events (instance_id, from_status, to_status, session_id, reason, at)
      select id, 'reserved', 'used', session_id, 'session_completed', coalesce(issued_at, created_at)
        from stamp_instances where status = 'used' order by created_at, serial;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists record_stamp_instance_creations on stamp_instances;`);
    this.addSql(`drop trigger if exists record_stamp_instance_moves on stamp_instances;`);
    this.addSql(`drop trigger if exists stamp_instance_move_allowed on stamp_instances;`);
    this.addSql(`drop function if exists record_stamp_instance_creations();`);
    this.addSql(`drop function if exists record_stamp_instance_moves();`);
    this.addSql(`drop function if exists stamp_instance_move_allowed();`);
    this.addSql(`drop table if exists "stamp_instance_events" cascade;`);
    this.addSql(`drop index if exists "stamp_instances_certificate_number_unique";`);
    this.addSql(`alter table "stamp_instances" drop column if exists "vendor_attempts";`);
  }
}

//! `stampede run [WORKLOAD] [options]`: what needs no server (`--list`, `-b list`,
//! `--show-script`), else the plan (`crate::plan`) carried out (`crate::run`).

use anyhow::Result;
use workload::script::builtin_text;
use workload::tpcb;

use crate::console::Failure;
use crate::families::RunArgs;
use crate::plan::{Frontend, Plan};
use crate::workloads;

pub fn run(args: RunArgs) -> Result<i32> {
    match args.list.as_deref() {
        Some("markdown") => {
            print!("{}", workloads::markdown_table());
            return Ok(0);
        }
        Some(_) => {
            println!("{}", workloads::list());
            return Ok(0);
        }
        None => {}
    }
    if args.builtin.iter().any(|b| b == "list") {
        println!("{}", tpcb::available_list());
        return Ok(0);
    }
    if let Some(name) = &args.show_script {
        let b = tpcb::builtin(name).map_err(|e| Failure::usage(e.to_string(), ""))?;
        print!("-- {}: {}\n{}", b.name(), b.description(), builtin_text(b));
        return Ok(0);
    }
    let plan = Plan::from_run(args, Frontend::Native)?;
    crate::run::execute(plan)
}
